/* clgrad tune (placeholder until implemented). */
#include "cli.h"

int cmd_tune(int argc, char **argv)
{
	fprintf(stderr, "clgrad tune: not implemented yet\n");
	return 2;
}
