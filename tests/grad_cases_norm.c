/* Gradient-check cases of the norm family (see tests/test_grad.h). */
#include "test_grad.h"

const gcase *grad_cases_norm(int *n)
{
	*n = 0;
	return NULL;
}
