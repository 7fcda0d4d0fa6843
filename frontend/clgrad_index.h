/* clgrad: index ops (included by clgrad.h). */
#ifndef CLGRAD_INDEX_H
#define CLGRAD_INDEX_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
