/* Reference implementations of the conv family. */
#include "ref_internal.h"

void clg_ref_register_conv(clg_backend *be)
{
	(void)be;
}
