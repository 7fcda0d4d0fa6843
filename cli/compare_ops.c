/* compare section: ops (placeholder until implemented). */
#include "compare.h"

int compare_ops(clg_backend *ref, clg_backend *dev, const compare_opts *o, json_writer *w)
{
	json_key_str(w, "error", "not implemented yet");
	return 1;
}
