/* Reference implementations of the norm family. */
#include "ref_internal.h"

void clg_ref_register_norm(clg_backend *be)
{
	(void)be;
}
