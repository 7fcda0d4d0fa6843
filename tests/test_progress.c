/* The CLI's rates (cli/progress.c): three significant digits at least, never an exponent, so that
 * a slow run's 1.09 samples/s does not read as 1 (issue 34). Host only. */
#include "test_util.h"
#include "progress.h"

#include <math.h>
#include <string.h>

static void check_rate(double x, const char *want)
{
	char buf[32];
	clg_fmt_rate(buf, sizeof(buf), x);
	CHECK(!strcmp(buf, want), "rate %.17g: '%s', expected '%s'", x, buf, want);
}

int main(void)
{
	check_rate(1.0913, "1.09");
	check_rate(0.64, "0.64");
	check_rate(0.0123456, "0.0123");
	check_rate(9.999, "10.00"); /* rounding up at a boundary keeps the digits of the lower range */
	check_rate(86.34, "86.3");
	check_rate(863.4, "863");
	check_rate(12345.6, "12346");
	check_rate(0, "0");
	check_rate(NAN, "-");
	check_rate(INFINITY, "-");
	check_rate(-1, "-");
	return t_finish("test_progress");
}
