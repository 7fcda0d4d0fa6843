/* OpenCL launchers of the index family. */
#include "cl_internal.h"

void clg_cl_register_index(clg_backend *be)
{
	(void)be;
}
