/* clgrad data: datasets read from files into host memory, and a loader that shuffles them, cuts
 * batches and uploads them to a device one batch ahead of the training loop.
 *
 * Readers (host side only, no device needed):
 *   IDX (MNIST, Fashion-MNIST; plain or gzip)  clg_idx_read_images / clg_idx_read_labels,
 *                                              clg_dataset_load_idx(dir, "train" | "t10k", ...)
 *   CIFAR-10 binary batches                    clg_cifar10_read_files, clg_dataset_load_cifar10
 *   CSV (numeric cells, optional header)       clg_csv_read
 *   text for a language model (a file, a folder) clg_text_load[_tok], clg_text_windows
 * Every reader validates what it reads (magic numbers, dimensions, exact file length, counts) and
 * fails with CLG_ERR_FORMAT (malformed file) or CLG_ERR_IO (cannot open or read); the message from
 * clg_last_error() starts with the file's path. Nothing is returned on failure (the output struct
 * is left zeroed), and nothing ever exits the process.
 *
 * Ownership: a clg_dataset / clg_text owns its arrays; release them with clg_dataset_free /
 * clg_text_free (both accept a zeroed struct). A loader borrows its dataset, which must outlive it.
 */
#ifndef CLGRAD_DATA_H
#define CLGRAD_DATA_H

#include "clgrad.h"
#include "clgrad_tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- datasets ------------------------------------------------------------------------------ */

#define CLG_DATA_MAX_DIMS (CLG_MAX_DIMS - 1) /* dims of one sample (a batch adds one) */

typedef struct {
	int64_t n;                          /* number of samples */
	int ndim;                           /* dims of one sample */
	int64_t shape[CLG_DATA_MAX_DIMS];   /* shape of one sample, e.g. (1, 28, 28) or (3, 32, 32) */
	int64_t sample_numel;               /* product of shape */
	clg_dtype x_dtype;                  /* CLG_F32 (x is set) or CLG_I32 (xi is set) */
	float *x;                           /* (n, shape...) float features, or NULL */
	int32_t *xi;                        /* (n, shape...) int32 inputs (token ids), or NULL */
	int64_t y_numel;                    /* labels per sample: 1 (a class), T (next tokens), 0: none */
	int32_t *y;                         /* (n, y_numel) labels in [0, num_classes), or NULL */
	int num_classes;                    /* 0 when there are no labels */
	float *yf;                          /* (n, y_numel) float targets (regression), or NULL; a
					     * dataset has labels y or targets yf, not both */
} clg_dataset;

/* Allocates an empty dataset (arrays zero-filled) for filling by hand. x_dtype is CLG_F32 or
 * CLG_I32; y_numel 0 means no labels. num_classes is left 0 for the caller to set. */
clg_status clg_dataset_init(clg_dataset *ds, int64_t n, int ndim, const int64_t *shape, clg_dtype x_dtype,
			    int64_t y_numel);
/* The same with the targets' dtype: CLG_I32 labels (y, as clg_dataset_init) or CLG_F32 targets
 * (yf: a regression's values, y_numel per sample). */
clg_status clg_dataset_init_ex(clg_dataset *ds, int64_t n, int ndim, const int64_t *shape, clg_dtype x_dtype,
			       int64_t y_numel, clg_dtype y_dtype);
void clg_dataset_free(clg_dataset *ds);

/* Subsets, copied (each owns its arrays; free with clg_dataset_free): samples [start, start +
 * count) of src (count -1: to the end); the samples idx[0 .. n) in that order (an index may
 * repeat); and a split into a, the first n_a samples of a permutation, and b, the rest (the
 * permutation: the loader's shuffle of epoch 0 for seed, or the file's order with seed 0; b may
 * be NULL to keep only a). Shape, dtypes and num_classes are src's. CLG_ERR_INVALID names the
 * range or index outside [0, src->n). */
clg_status clg_dataset_subset(const clg_dataset *src, int64_t start, int64_t count, clg_dataset *out);
clg_status clg_dataset_select(const clg_dataset *src, const int64_t *idx, int64_t n, clg_dataset *out);
clg_status clg_dataset_split(const clg_dataset *src, int64_t n_a, uint64_t seed, clg_dataset *a, clg_dataset *b);

/* Per-channel mean and (population) standard deviation of float features. Channel c of a sample is
 * the c-th of nchan equal slices of it: for (C, H, W) images nchan = C; nchan = 1 pools everything;
 * nchan = sample_numel gives one statistic per feature (CSV columns). */
clg_status clg_dataset_channel_stats(const clg_dataset *ds, int nchan, float *mean, float *std);
/* x = (x - mean[c]) / std[c] for each channel c (as above); every std must be > 0. Compute the
 * statistics on the training split and apply the same ones to the test split. */
clg_status clg_dataset_normalize(clg_dataset *ds, int nchan, const float *mean, const float *std);

/* ---- IDX (MNIST / Fashion-MNIST) ------------------------------------------------------------ */
/* Plain or gzip files (detected by their first bytes). Images: magic 0x00000803, dims (N, rows,
 * cols), unsigned bytes, returned as floats in [0, 1] (value / 255) with shape (N, rows, cols).
 * Labels: magic 0x00000801, dims (N). The file must hold exactly header + data bytes. */
clg_status clg_idx_read_images(const char *path, float **x, int64_t *n, int64_t *rows, int64_t *cols);
clg_status clg_idx_read_labels(const char *path, int32_t **y, int64_t *n);
/* `<dir>/<split>-images-idx3-ubyte[.gz]` and `<dir>/<split>-labels-idx1-ubyte[.gz]` (split is
 * "train" or "t10k"): samples (1, rows, cols) in [0, 1], labels (1 per sample), num_classes is the
 * largest label + 1. Image and label counts must agree. */
clg_status clg_dataset_load_idx(const char *dir, const char *split, clg_dataset *ds);

/* ---- CIFAR-10 binary ------------------------------------------------------------------------ */
/* Records of 1 label byte (0..9) + 3072 pixel bytes (R, G, B planes of 32x32). Samples (3, 32, 32)
 * in [0, 1], num_classes 10. The files are concatenated in order. */
clg_status clg_cifar10_read_files(const char *const *paths, int npaths, clg_dataset *ds);
/* split "train": data_batch_1.bin .. data_batch_5.bin; "test": test_batch.bin (in dir). */
clg_status clg_dataset_load_cifar10(const char *dir, const char *split, clg_dataset *ds);

/* ---- CSV --------------------------------------------------------------------------------- */
#define CLG_CSV_NO_LABEL (-1)
typedef struct {
	char delim;     /* 0 means ',' */
	int header;     /* 1: the first line is a header, 0: no header, -1: a header if the first line
	                   has a cell that is not a number */
	int label_col;  /* column (0-based) of the integer class label, or CLG_CSV_NO_LABEL */
} clg_csv_opts;
/* Every row must have the same number of cells; feature cells are finite decimal numbers, label
 * cells non-negative integers. Blank lines are skipped, "\r\n" line ends accepted. Samples have
 * shape (columns - 1) (or (columns) without a label column) and keep their raw values. NULL opts:
 * ',' delimiter, header detected, no label column. */
clg_status clg_csv_read(const char *path, const clg_csv_opts *opts, clg_dataset *ds);

/* ---- text for a language model ---------------------------------------------------------- */
/* The bytes of path: a file as it is (at most CLG_TEXT_MAX_BYTES, no NUL byte); or a folder's
 * texts joined in name order: its regular files (symbolic links, names starting with '.' and
 * ending in ".dat" skipped), a file that has lines of just "%" (a fortune cookie file, e.g.
 * /usr/share/games/fortunes of Debian's fortunes packages) as its non-blank fortunes each
 * followed by the line "%", any other file as it is, ending with a newline. *out: NUL-terminated,
 * free(). */
clg_status clg_text_read(const char *path, char **out, size_t *len);
/* FNV-1a (64 bits) of n bytes: with the length, a text's fingerprint in checkpoints. */
uint64_t clg_text_hash(const void *data, size_t n);

typedef struct {
	int vocab_size;              /* tokens of the tokenizer */
	unsigned char vocab[256];    /* chars and bytes: id -> byte, in increasing byte order */
	int16_t id_of[256];          /* chars and bytes: byte -> id, -1 for bytes not in the vocabulary */
	int64_t n;                   /* tokens of the text */
	int32_t *ids;                /* (n) the text encoded */
	int64_t n_train;             /* ids[0, n_train) is the training part, ids[n_train, n) validation */
	clg_tokenizer *tok;          /* the tokenizer that encoded it (owned) */
	int64_t bytes;               /* the text's length in bytes */
	uint64_t hash;               /* clg_text_hash of its bytes */
	int64_t bytes_train;         /* the training part's bytes: the text's first bytes_train */
} clg_text;
/* Reads a text (clg_text_read) with the chars tokenizer of the whole text (the sorted set of its
 * bytes, clg_text_load's behaviour since the beginning); the last val_fraction (in [0, 1)) of its
 * bytes becomes the validation part. */
#define CLG_TEXT_MAX_BYTES ((size_t)1 << 30)
clg_status clg_text_load(const char *path, double val_fraction, clg_text *t);
/* The same with a given tokenizer (copied; encoding fails, naming the byte, where it does not cover
 * the text) or, when tok is NULL, one made by spec (clg_tokenizer_from_spec: "bytes", "chars" of
 * the whole text, "bpe:N" learned from the training part only, a tokenizer file; NULL: "chars").
 * The training and validation parts are encoded separately (no token spans the split). */
clg_status clg_text_load_tok(const char *path, double val_fraction, const clg_tokenizer *tok, const char *spec,
			     clg_text *t);
void clg_text_free(clg_text *t);
/* One token a byte (chars and bytes; BPE: clg_tokenizer_encode / _decode with t->tok, else
 * CLG_ERR_UNSUPPORTED): encodes len bytes of s into len ids (CLG_ERR_INVALID for a byte outside
 * the vocabulary); decodes n ids into n bytes (CLG_ERR_INVALID for an id outside [0, vocab_size)). */
clg_status clg_text_encode(const clg_text *t, const char *s, size_t len, int32_t *ids);
clg_status clg_text_decode(const clg_text *t, const int32_t *ids, size_t n, char *s);
/* Next-token windows over the training (val = 0) or validation (val = 1) part: sample i holds the
 * ids at [i * stride, i * stride + seq_len) as xi (shape (seq_len), CLG_I32) and the ids one
 * further as y (y_numel = seq_len); num_classes = vocab_size. */
clg_status clg_text_windows(const clg_text *t, int val, int64_t seq_len, int64_t stride, clg_dataset *ds);

/* ---- one-hot ------------------------------------------------------------------------------ */
/* out (n, num_classes) row-major floats: 1 at each label, else 0. CLG_ERR_INVALID (naming the
 * position) for a label outside [0, num_classes). */
clg_status clg_one_hot_host(const int32_t *labels, int64_t n, int num_classes, float *out);
/* The same as a CLG_F32 tensor of shape (n, num_classes) on be (clg_cross_entropy's targets). */
clg_status clg_one_hot(clg_backend *be, const int32_t *labels, int64_t n, int num_classes, clg_tensor **out);

/* ---- loader ------------------------------------------------------------------------------ */
/* Epoch e visits the samples in the order of a permutation that depends only on (seed, e): a
 * Fisher-Yates shuffle driven by splitmix64 with 64-bit integer arithmetic, the same on every
 * machine. Batches are cut in that order; the last partial batch is kept unless DROP_LAST. */
enum {
	CLG_LOADER_SHUFFLE = 1,   /* without it every epoch visits 0, 1, ..., n - 1 */
	CLG_LOADER_DROP_LAST = 2, /* drop the last batch when it has fewer than batch samples */
	CLG_LOADER_ONE_HOT = 4,   /* y as CLG_F32 one-hot (B, [T,] num_classes) instead of int32 */
};

typedef struct clg_loader clg_loader;

/* Where a loader stands: the next batch is taken at position pos of epoch epoch's order. Plain
 * data: save it with a checkpoint and give it back to clg_loader_set_state to resume. */
typedef struct {
	uint64_t seed;
	uint64_t epoch;
	int64_t pos;
} clg_loader_state;

/* ds is borrowed and must outlive the loader. */
clg_status clg_loader_new(const clg_dataset *ds, int64_t batch, uint64_t seed, int flags, clg_loader **out);
/* Frees the loader and the batch it prepared ahead (a device buffer: free the loader before closing
 * the backend it last uploaded to). */
void clg_loader_free(clg_loader *l);
/* Batches in one epoch. */
int64_t clg_loader_batches_per_epoch(const clg_loader *l);

/* Hands out the next batch as tensors on be: x (B, sample shape...) of the dataset's x_dtype and
 * y (B) or (B, y_numel) int32 (one-hot floats with CLG_LOADER_ONE_HOT; float32 for a dataset of
 * float targets yf; NULL without labels; y itself may be NULL to ignore labels). At the end of an epoch it sets *x = *y = NULL once and
 * returns CLG_OK; the next call starts the next epoch:
 *     for (;;) { clg_loader_next(l, be, &x, &y); if (!x) break; ... }
 * Pipelining: the batch returned was gathered and its upload enqueued during the previous call;
 * before returning, this call gathers the following batch on the host and enqueues its upload,
 * which OpenCL devices perform asynchronously, so the host work overlaps the device's work on
 * the ops already queued. The tensors follow clgrad's ownership rules (the caller's, or the current
 * scope's); the loader keeps the batch it prepared ahead until the next call or clg_loader_free.
 * Calling with another backend than last time discards the batch prepared for the old one. */
clg_status clg_loader_next(clg_loader *l, clg_backend *be, clg_tensor **x, clg_tensor **y);
/* The same on the host: x gets batch * sample_numel values (float or int32 as the dataset's
 * x_dtype), y (may be NULL) batch * y_numel labels (float targets' bits for a dataset of yf); *count the samples written, 0 at the end of
 * an epoch. Discards a batch prepared ahead by clg_loader_next. */
clg_status clg_loader_next_host(clg_loader *l, void *x, int32_t *y, int64_t *count);
/* The state for the next batch clg_loader_next will hand out (not the one prepared ahead). */
void clg_loader_get_state(const clg_loader *l, clg_loader_state *st);
/* Resumes from a saved state (pos in [0, n]); discards any batch prepared ahead. */
clg_status clg_loader_set_state(clg_loader *l, const clg_loader_state *st);
/* "seed=S epoch=E pos=P", for a checkpoint's string metadata; returns CLG_ERR_INVALID when len is
 * too small. The parser accepts exactly that form. */
clg_status clg_loader_state_format(const clg_loader_state *st, char *buf, size_t len);
clg_status clg_loader_state_parse(const char *s, clg_loader_state *st);

#ifdef __cplusplus
}
#endif
#endif
