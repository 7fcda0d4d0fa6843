#ifndef CLG_REF_INTERNAL_H
#define CLG_REF_INTERNAL_H
#include "../clg_internal.h"

void clg_ref_register_ops(clg_backend *be);

#endif
