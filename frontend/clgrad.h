/* clgrad: the public header. Include this one. */
#ifndef CLGRAD_H
#define CLGRAD_H

#include "clg_backend.h"

#endif
