/* compare sections: capabilities, peaks, compile, roofline (placeholder until implemented). */
#include "compare.h"

static int not_yet(json_writer *w)
{
	json_key_str(w, "error", "not implemented yet");
	return 1;
}

int compare_capabilities(clg_backend *dev, const compare_opts *o, json_writer *w) { return not_yet(w); }
int compare_peaks(clg_backend *dev, const compare_opts *o, json_writer *w, compare_peak_values *out)
{
	*out = (compare_peak_values){0};
	return not_yet(w);
}
int compare_compile(clg_backend *dev, const compare_opts *o, json_writer *w) { return not_yet(w); }
int compare_roofline(clg_backend *dev, const compare_opts *o, const compare_peak_values *peaks, json_writer *w)
{
	return not_yet(w);
}
