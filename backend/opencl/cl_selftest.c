/* Known-bad list and first-use self-test (placeholder: no routes yet). */
#include "clg_selftest.h"

clg_status clg_backend_routes(clg_backend *be, const clg_route **routes, int *n)
{
	*routes = NULL;
	*n = 0;
	return CLG_OK;
}
