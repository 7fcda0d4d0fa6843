/* Op-suite cases of the norm family (see tests/test_ops.h). */
#include "test_ops.h"

void ops_cases_norm(op_case_adder add)
{
	(void)add;
}
