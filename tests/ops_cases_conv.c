/* Op-suite cases of the conv family (see tests/test_ops.h). */
#include "test_ops.h"

void ops_cases_conv(op_case_adder add)
{
	(void)add;
}
