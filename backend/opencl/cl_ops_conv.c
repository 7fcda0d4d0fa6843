/* OpenCL launchers of the conv family. */
#include "cl_internal.h"

void clg_cl_register_conv(clg_backend *be)
{
	(void)be;
}
