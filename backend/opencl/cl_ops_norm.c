/* OpenCL launchers of the norm family. */
#include "cl_internal.h"

void clg_cl_register_norm(clg_backend *be)
{
	(void)be;
}
