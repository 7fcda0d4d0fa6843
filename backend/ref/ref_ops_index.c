/* Reference implementations of the index family. */
#include "ref_internal.h"

void clg_ref_register_index(clg_backend *be)
{
	(void)be;
}
