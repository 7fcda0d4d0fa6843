/* clgrad compare (placeholder until implemented). */
#include "cli.h"

int cmd_compare(int argc, char **argv)
{
	fprintf(stderr, "clgrad compare: not implemented yet\n");
	return 2;
}
