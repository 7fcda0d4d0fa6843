/* clgrad bench (placeholder until implemented). */
#include "cli.h"

int cmd_bench(int argc, char **argv)
{
	fprintf(stderr, "clgrad bench: not implemented yet\n");
	return 2;
}
