/* Op-suite cases of the index family (see tests/test_ops.h). */
#include "test_ops.h"

void ops_cases_index(op_case_adder add)
{
	(void)add;
}
