/* clgrad: norm ops (included by clgrad.h). */
#ifndef CLGRAD_NORM_H
#define CLGRAD_NORM_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
