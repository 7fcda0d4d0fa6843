/* clgrad: conv ops (included by clgrad.h). */
#ifndef CLGRAD_CONV_H
#define CLGRAD_CONV_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
