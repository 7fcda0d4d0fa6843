/* clgrad safetensors: checkpoints in the safetensors format (https://github.com/huggingface/safetensors).
 *
 * Layout: an 8-byte little-endian header length N, N bytes of JSON, then the raw little-endian
 * tensor data. The JSON maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]}
 * (offsets relative to the start of the data) and may hold "__metadata__", an object of string
 * values. Supported dtypes: F32, F64, I32, F16.
 *
 * Writing: tensors are laid out back to back, by decreasing dtype size and then by name (so each
 * is aligned to its element size), and the header is padded with spaces so the data starts at a
 * multiple of 8. The file is replaced atomically: a temporary file in the same folder is written,
 * flushed and fsync'ed, then renamed over the path, and the folder fsync'ed. If anything fails the
 * old file is left as it was and the temporary file is removed.
 *
 * Reading is strict (cJSON parses the header, held to the subset the format uses: at most 65536
 * tensors, nesting 3 deep, integers of digits only below 2^53): a malformed or truncated header,
 * bad JSON, duplicate names or keys, an unknown dtype, a shape that does
 * not match its byte range, offsets out of range, overlapping or leaving gaps, or bytes after the
 * last tensor give CLG_ERR_FORMAT (CLG_ERR_DTYPE for an unsupported dtype) with a message naming
 * the file.
 */
#ifndef CLGRAD_SAFETENSORS_H
#define CLGRAD_SAFETENSORS_H

#include "clgrad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- writer ------------------------------------------------------------------------------ */
typedef struct clg_st_writer clg_st_writer;

clg_status clg_st_writer_new(clg_st_writer **out);
void clg_st_writer_free(clg_st_writer *w);
/* Adds a tensor of host data (row-major, ndim <= CLG_MAX_DIMS, ndim 0 for a scalar). The name is
 * copied; data is borrowed and must stay valid until clg_st_write. Names must be unique. */
clg_status clg_st_writer_add(clg_st_writer *w, const char *name, clg_dtype dt, int ndim, const int64_t *shape,
			     const void *data);
/* Adds a clgrad tensor: reads it to the host now (waiting for its device); the writer owns the copy. */
clg_status clg_st_writer_add_tensor(clg_st_writer *w, const char *name, clg_tensor *t);
/* Adds a "__metadata__" entry (both strings are copied; keys must be unique). */
clg_status clg_st_writer_meta(clg_st_writer *w, const char *key, const char *value);
/* Writes everything added so far to path, atomically (see above). The writer can be written again. */
clg_status clg_st_write(clg_st_writer *w, const char *path);

/* ---- reader ------------------------------------------------------------------------------ */
typedef struct {
	const char *name;
	clg_dtype dtype;
	int ndim;
	int64_t shape[CLG_MAX_DIMS];
	int64_t numel;
	size_t nbytes;
	const void *data;  /* in host byte order, aligned to the element size; owned by the file */
} clg_st_tensor;

typedef struct clg_st_file clg_st_file;

/* Reads and validates the whole file. */
clg_status clg_st_open(const char *path, clg_st_file **out);
void clg_st_close(clg_st_file *f);
/* Tensors in the order of their data in the file. */
int clg_st_count(const clg_st_file *f);
const clg_st_tensor *clg_st_at(const clg_st_file *f, int i);
/* NULL when there is no tensor of that name. */
const clg_st_tensor *clg_st_find(const clg_st_file *f, const char *name);
/* Metadata: the value of a key (NULL when absent), or the i-th pair. */
int clg_st_meta_count(const clg_st_file *f);
const char *clg_st_meta(const clg_st_file *f, const char *key);
clg_status clg_st_meta_at(const clg_st_file *f, int i, const char **key, const char **value);
/* Uploads a named tensor to be as a new clgrad tensor (CLG_ERR_INVALID when the name is absent). */
clg_status clg_st_load_tensor(const clg_st_file *f, const char *name, clg_backend *be, clg_tensor **out);

#ifdef __cplusplus
}
#endif
#endif
