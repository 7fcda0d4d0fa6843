/* Data readers and the batch loader: IDX (plain and gzip), CIFAR-10, CSV and text files written
 * here into a temporary folder and read back; malformed files rejected with the right status and
 * the file's name in the message; loader shuffling, batching, coverage, resume, and batches on
 * every device; the real Fashion-MNIST files when installed.
 * usage: test_data [fashion-mnist folder]   (default /usr/share/datasets/fashion-mnist) */
#define _GNU_SOURCE
#include "test_util.h"
#include <clgrad_data.h>
#include <fe_internal.h> /* clg_read_text_file */

#include <math.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif

static char *tmp;

static char *tpath(const char *name)
{
	static char buf[8][1024];
	static int k;
	char *p = buf[k++ % 8];
	snprintf(p, 1024, "%s/%s", tmp, name);
	return p;
}

static void write_bytes(const char *path, const void *data, size_t n, int gz)
{
	if (gz) {
		gzFile g = gzopen(path, "wb");
		if (!g || (n && gzwrite(g, data, (unsigned)n) != (int)n) || gzclose(g) != Z_OK) {
			fprintf(stderr, "cannot write %s\n", path);
			exit(1);
		}
	} else {
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
			fprintf(stderr, "cannot write %s\n", path);
			exit(1);
		}
	}
}

static void write_text(const char *path, const char *s) { write_bytes(path, s, strlen(s), 0); }

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* An IDX image file of n images rows x cols (pixel k of image i = (7 i + k) % 256), plus extra
 * bytes (negative: that many bytes cut off the end). Returns its length. */
static size_t make_idx_images(unsigned char *buf, uint32_t magic, uint32_t n, uint32_t rows, uint32_t cols, int extra)
{
	size_t len = 16 + (size_t)n * rows * cols;
	put_be32(buf, magic);
	put_be32(buf + 4, n);
	put_be32(buf + 8, rows);
	put_be32(buf + 12, cols);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < rows * cols; k++)
			buf[16 + (size_t)i * rows * cols + k] = (unsigned char)((7 * i + k) % 256);
	for (int e = 0; e < extra; e++)
		buf[len + (size_t)e] = 0xAB;
	return len + (size_t)extra;
}

static size_t make_idx_labels(unsigned char *buf, uint32_t n, int extra)
{
	put_be32(buf, 0x00000801);
	put_be32(buf + 4, n);
	for (uint32_t i = 0; i < n; i++)
		buf[8 + i] = (unsigned char)(i % 3);
	for (int e = 0; e < extra; e++)
		buf[8 + n + (size_t)e] = 1;
	return 8 + n + (size_t)extra;
}

/* The call failed with `want`, and the message names `file`. */
#define CHECK_FAILS(expr, want, file)                                                                  \
	do {                                                                                               \
		clg_status s2_ = (expr);                                                                   \
		CHECK(s2_ == (want), "%s -> %s (expected %s): %s", #expr, clg_status_name(s2_),             \
		      clg_status_name(want), clg_last_error());                                            \
		CHECK(strstr(clg_last_error(), (file)) != NULL, "message of %s does not name %s: %s", #expr, \
		      (file), clg_last_error());                                                           \
	} while (0)

static void test_idx(void)
{
	unsigned char buf[16 + 5 * 12 + 8];
	size_t len;
	clg_dataset ds;
	float *x;
	int32_t *y;
	int64_t n, rows, cols;

	/* plain "train" and gzip "t10k" */
	for (int gz = 0; gz < 2; gz++) {
		const char *split = gz ? "t10k" : "train";
		char name[64];
		snprintf(name, sizeof(name), "%s-images-idx3-ubyte%s", split, gz ? ".gz" : "");
		write_bytes(tpath(name), buf, make_idx_images(buf, 0x803, 5, 3, 4, 0), gz);
		snprintf(name, sizeof(name), "%s-labels-idx1-ubyte%s", split, gz ? ".gz" : "");
		write_bytes(tpath(name), buf, make_idx_labels(buf, 5, 0), gz);
		CHECK_OK(clg_dataset_load_idx(tmp, split, &ds));
		CHECK(ds.n == 5 && ds.ndim == 3 && ds.shape[0] == 1 && ds.shape[1] == 3 && ds.shape[2] == 4 &&
			      ds.sample_numel == 12 && ds.x && !ds.xi && ds.y_numel == 1 && ds.num_classes == 3,
		      "idx %s: n %lld ndim %d shape (%lld, %lld, %lld) classes %d", split, (long long)ds.n, ds.ndim,
		      (long long)ds.shape[0], (long long)ds.shape[1], (long long)ds.shape[2], ds.num_classes);
		if (ds.n == 5 && ds.x && ds.y) {
			int bad = 0;
			for (int i = 0; i < 5; i++) {
				bad += ds.y[i] != i % 3;
				for (int k = 0; k < 12; k++)
					bad += fabsf(ds.x[i * 12 + k] - (float)((7 * i + k) % 256) / 255.0f) > 1e-7f;
			}
			CHECK(bad == 0, "idx %s: %d wrong values", split, bad);
		}
		clg_dataset_free(&ds);
	}
	CHECK(ds.x == NULL && ds.n == 0, "dataset_free leaves a zeroed struct");

	/* malformed: wrong magic, truncated, trailing bytes, in plain and gzip form */
	for (int gz = 0; gz < 2; gz++) {
		const char *p = tpath(gz ? "bad.gz" : "bad");
		len = make_idx_images(buf, 0x804, 5, 3, 4, 0);
		write_bytes(p, buf, len, gz);
		CHECK_FAILS(clg_idx_read_images(p, &x, &n, &rows, &cols), CLG_ERR_FORMAT, p);
		CHECK(strstr(clg_last_error(), "magic") != NULL, "wrong magic message: %s", clg_last_error());
		len = make_idx_labels(buf, 5, 0);
		write_bytes(p, buf, len, gz);
		CHECK_FAILS(clg_idx_read_images(p, &x, &n, &rows, &cols), CLG_ERR_FORMAT, p);
		CHECK_OK(clg_idx_read_labels(p, &y, &n));
		free(y);
		len = make_idx_images(buf, 0x803, 5, 3, 4, -1);
		write_bytes(p, buf, len, gz);
		CHECK_FAILS(clg_idx_read_images(p, &x, &n, &rows, &cols), CLG_ERR_FORMAT, p);
		CHECK(strstr(clg_last_error(), "truncated") != NULL, "truncated message: %s", clg_last_error());
		len = make_idx_images(buf, 0x803, 5, 3, 4, 1);
		write_bytes(p, buf, len, gz);
		CHECK_FAILS(clg_idx_read_images(p, &x, &n, &rows, &cols), CLG_ERR_FORMAT, p);
		CHECK(strstr(clg_last_error(), "trailing") != NULL, "trailing message: %s", clg_last_error());
		write_bytes(p, buf, 10, gz); /* cut inside the dims */
		CHECK_FAILS(clg_idx_read_images(p, &x, &n, &rows, &cols), CLG_ERR_FORMAT, p);
		len = make_idx_labels(buf, 5, 2);
		write_bytes(p, buf, len, gz);
		CHECK_FAILS(clg_idx_read_labels(p, &y, &n), CLG_ERR_FORMAT, p);
	}
	/* a gzip stream cut in the middle */
	{
		const char *p = tpath("cut.gz");
		unsigned char gzbuf[4096];
		size_t glen;
		FILE *f;
		len = make_idx_images(buf, 0x803, 5, 3, 4, 0);
		write_bytes(p, buf, len, 1);
		f = fopen(p, "rb");
		glen = f ? fread(gzbuf, 1, sizeof(gzbuf), f) : 0;
		if (f)
			fclose(f);
		write_bytes(p, gzbuf, glen / 2, 0);
		CHECK_FAILS(clg_idx_read_images(p, &x, &n, &rows, &cols), CLG_ERR_FORMAT, p);
	}
	/* counts of images and labels disagree */
	write_bytes(tpath("odd-images-idx3-ubyte"), buf, make_idx_images(buf, 0x803, 5, 3, 4, 0), 0);
	write_bytes(tpath("odd-labels-idx1-ubyte.gz"), buf, make_idx_labels(buf, 4, 0), 1);
	CHECK_FAILS(clg_dataset_load_idx(tmp, "odd", &ds), CLG_ERR_FORMAT, "odd-labels-idx1-ubyte.gz");
	CHECK(ds.x == NULL && ds.n == 0, "a failed load leaves the dataset empty");
	/* missing files */
	CHECK_FAILS(clg_dataset_load_idx(tmp, "none", &ds), CLG_ERR_IO, "none-images-idx3-ubyte");
	CHECK_FAILS(clg_idx_read_labels(tpath("missing"), &y, &n), CLG_ERR_IO, "missing");
}

/* Headers that announce far more data than their file holds fail with the file, the sizes and
 * the file's length named, before the announced size is allocated: the checks run in a child
 * whose address space is capped at what it uses now + 256 MiB (not under ASan, whose shadow
 * memory a cap breaks), so an allocation of the announced gigabytes would fail with
 * CLG_ERR_OOM instead. */
static void sizes_checks(void)
{
	unsigned char buf[64] = {0};
	const char *p = tpath("huge-idx3"), *pl = tpath("huge-idx1"), *pz = tpath("huge-idx3.gz");
	float *x = NULL;
	int32_t *y = NULL;
	int64_t n, rows, cols;
	clg_dataset ds;

	/* 34 bytes: a 16-byte header announcing 3072 x 1024 x 1024 = 3 GiB, then 18 bytes */
	make_idx_images(buf, 0x803, 1, 3, 6, 0);
	put_be32(buf + 4, 3072);
	put_be32(buf + 8, 1024);
	put_be32(buf + 12, 1024);
	write_bytes(p, buf, 34, 0);
	CHECK_FAILS(clg_idx_read_images(p, &x, &n, &rows, &cols), CLG_ERR_FORMAT, p);
	CHECK(strstr(clg_last_error(), "3072 x 1024 x 1024 = 3221225472") && strstr(clg_last_error(), "holds 18"),
	      "the message names the announced and the actual sizes: %s", clg_last_error());
	/* sizes whose product wraps 64 bits to 0 (2^20 x 2^20 x 2^24) */
	put_be32(buf + 4, 1u << 20);
	put_be32(buf + 8, 1u << 20);
	put_be32(buf + 12, 1u << 24);
	write_bytes(p, buf, 16, 0);
	CHECK_FAILS(clg_idx_read_images(p, &x, &n, &rows, &cols), CLG_ERR_FORMAT, p);
	CHECK(strstr(clg_last_error(), "too large") != NULL, "wrapping sizes: %s", clg_last_error());
	/* labels: 2^32 - 1 announced, 26 bytes there */
	make_idx_labels(buf, 26, 0);
	put_be32(buf + 4, 0xffffffffu);
	write_bytes(pl, buf, 34, 0);
	CHECK_FAILS(clg_idx_read_labels(pl, &y, &n), CLG_ERR_FORMAT, pl);
	CHECK(strstr(clg_last_error(), "4294967295") != NULL, "labels: %s", clg_last_error());
	/* gzip: a few dozen bytes cannot expand to 3 GiB */
	make_idx_images(buf, 0x803, 1, 3, 6, 0);
	put_be32(buf + 4, 3072);
	put_be32(buf + 8, 1024);
	put_be32(buf + 12, 1024);
	write_bytes(pz, buf, 34, 1);
	CHECK_FAILS(clg_idx_read_images(pz, &x, &n, &rows, &cols), CLG_ERR_FORMAT, pz);
	CHECK(strstr(clg_last_error(), "gzip file can hold") != NULL, "gzip: %s", clg_last_error());
	/* gzip of 8 MiB of random bytes announcing 1 GiB (the ratio allows it): the buffer grows with
	 * the data that arrives, and the stream ends short */
	{
		size_t len = 16 + ((size_t)8 << 20);
		unsigned char *big = malloc(len);
		uint32_t r = 1;
		if (big) {
			make_idx_images(big, 0x803, 1, 1, 1, 0);
			put_be32(big + 4, 1024);
			put_be32(big + 8, 1024);
			put_be32(big + 12, 1024);
			for (size_t i = 16; i < len; i++) {
				r = r * 1664525u + 1013904223u;
				big[i] = (unsigned char)(r >> 24);
			}
			write_bytes(pz, big, len, 1);
			free(big);
			CHECK_FAILS(clg_idx_read_images(pz, &x, &n, &rows, &cols), CLG_ERR_FORMAT, pz);
			CHECK(strstr(clg_last_error(), "truncated") != NULL, "short gzip stream: %s", clg_last_error());
		}
	}
	/* a folder with such a file fails the same way */
	write_bytes(tpath("huge-images-idx3-ubyte"), buf, 34, 0);
	write_bytes(tpath("huge-labels-idx1-ubyte"), buf, make_idx_labels(buf, 5, 0), 0);
	CHECK_FAILS(clg_dataset_load_idx(tmp, "huge", &ds), CLG_ERR_FORMAT, "huge-images-idx3-ubyte");
	/* CSV from a device that never ends: the first NUL stops it */
	if (access("/dev/zero", R_OK) == 0)
		CHECK_FAILS(clg_csv_read("/dev/zero", NULL, &ds), CLG_ERR_FORMAT, "/dev/zero");
}

static void test_sizes(void)
{
	pid_t pid;
	int status = 0;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
#ifndef T_ASAN
		FILE *f = fopen("/proc/self/statm", "r");
		unsigned long pages = 0;
		if (f && fscanf(f, "%lu", &pages) == 1 && pages) {
			struct rlimit lim;
			lim.rlim_cur = lim.rlim_max = pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)256 << 20);
			if (setrlimit(RLIMIT_AS, &lim) != 0)
				printf("note: cannot cap the address space: size checks run uncapped\n");
		}
		if (f)
			fclose(f);
#endif
		sizes_checks();
		fflush(NULL);
		_exit(t_failures ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "size checks (in a child with a capped address space) failed or crashed: status 0x%x", status);
}

static void make_cifar(const char *path, int nrec, int first, int extra, int badlabel)
{
	size_t len = (size_t)nrec * 3073 + (size_t)(extra > 0 ? extra : 0);
	unsigned char *b = calloc(len + 1, 1);
	for (int r = 0; r < nrec; r++) {
		b[(size_t)r * 3073] = (unsigned char)((first + r) % 10);
		for (int k = 0; k < 3072; k++)
			b[(size_t)r * 3073 + 1 + k] = (unsigned char)((first + r + k) % 251);
	}
	if (badlabel)
		b[3073] = 10;
	write_bytes(path, b, extra < 0 ? len + (size_t)extra : len, 0);
	free(b);
}

static void test_cifar(void)
{
	clg_dataset ds;
	char name[64];
	for (int i = 1; i <= 5; i++) {
		snprintf(name, sizeof(name), "data_batch_%d.bin", i);
		make_cifar(tpath(name), 2, 2 * (i - 1), 0, 0);
	}
	make_cifar(tpath("test_batch.bin"), 3, 100, 0, 0);
	CHECK_OK(clg_dataset_load_cifar10(tmp, "train", &ds));
	CHECK(ds.n == 10 && ds.ndim == 3 && ds.shape[0] == 3 && ds.shape[1] == 32 && ds.shape[2] == 32 &&
		      ds.num_classes == 10 && ds.x && ds.y,
	      "cifar train: n %lld classes %d", (long long)ds.n, ds.num_classes);
	if (ds.n == 10 && ds.x && ds.y) {
		int bad = 0;
		for (int r = 0; r < 10; r++) {
			bad += ds.y[r] != r % 10;
			for (int k = 0; k < 3072; k += 97)
				bad += ds.x[(size_t)r * 3072 + k] != (float)((r + k) % 251) / 255.0f;
		}
		CHECK(bad == 0, "cifar train: %d wrong values", bad);
	}
	clg_dataset_free(&ds);
	CHECK_OK(clg_dataset_load_cifar10(tmp, "test", &ds));
	CHECK(ds.n == 3 && ds.y && ds.y[0] == 0 && ds.y[2] == 2, "cifar test: n %lld", (long long)ds.n);
	clg_dataset_free(&ds);

	make_cifar(tpath("trunc.bin"), 2, 0, -1, 0);
	{
		const char *p = tpath("trunc.bin");
		CHECK_FAILS(clg_cifar10_read_files(&p, 1, &ds), CLG_ERR_FORMAT, "trunc.bin");
		make_cifar(tpath("label.bin"), 2, 0, 0, 1);
		p = tpath("label.bin");
		CHECK_FAILS(clg_cifar10_read_files(&p, 1, &ds), CLG_ERR_FORMAT, "label.bin");
		make_cifar(tpath("extra.bin"), 2, 0, 5, 0);
		p = tpath("extra.bin");
		CHECK_FAILS(clg_cifar10_read_files(&p, 1, &ds), CLG_ERR_FORMAT, "extra.bin");
		write_bytes(tpath("empty.bin"), "", 0, 0);
		p = tpath("empty.bin");
		CHECK_FAILS(clg_cifar10_read_files(&p, 1, &ds), CLG_ERR_FORMAT, "empty.bin");
	}
}

static void test_csv(void)
{
	clg_dataset ds;
	clg_csv_opts o = {',', -1, 2};

	write_text(tpath("a.csv"), "x1, x2 ,label\n1,2,0\n3.5,-4e2,2\n\n  5 , \"6\" ,1\r\n7,8,1");
	CHECK_OK(clg_csv_read(tpath("a.csv"), &o, &ds));
	CHECK(ds.n == 4 && ds.ndim == 1 && ds.shape[0] == 2 && ds.sample_numel == 2 && ds.y && ds.num_classes == 3,
	      "csv: n %lld features %lld classes %d", (long long)ds.n, (long long)ds.shape[0], ds.num_classes);
	if (ds.n == 4 && ds.x && ds.y) {
		static const float ex[8] = {1, 2, 3.5f, -400, 5, 6, 7, 8};
		static const int32_t ey[4] = {0, 2, 1, 1};
		int bad = 0;
		for (int i = 0; i < 8; i++)
			bad += ds.x[i] != ex[i];
		for (int i = 0; i < 4; i++)
			bad += ds.y[i] != ey[i];
		CHECK(bad == 0, "csv: %d wrong values", bad);
	}
	clg_dataset_free(&ds);

	/* no header, no label column, ';' delimiter */
	{
		clg_csv_opts o2 = {';', 0, CLG_CSV_NO_LABEL};
		write_text(tpath("b.csv"), "1;2;3\n4;5;6\n");
		CHECK_OK(clg_csv_read(tpath("b.csv"), &o2, &ds));
		CHECK(ds.n == 2 && ds.shape[0] == 3 && !ds.y && ds.x && ds.x[5] == 6, "csv without labels");
		clg_dataset_free(&ds);
		/* header forced to 0 on a file with a header: the header cell is a bad cell */
		o2.delim = ',';
		CHECK_FAILS(clg_csv_read(tpath("a.csv"), &o2, &ds), CLG_ERR_FORMAT, "a.csv");
		CHECK(strstr(clg_last_error(), ":1:") != NULL, "csv message names the line: %s", clg_last_error());
	}
	/* a tab delimiter is not a blank: quoted cells end at it, and an empty cell is a cell */
	write_text(tpath("tab.csv"), "\"a\"\t\"b \"\"x\"\"\"\n 1\t2 \n");
	CHECK_OK(clg_csv_read(tpath("tab.csv"), &(clg_csv_opts){'\t', 1, CLG_CSV_NO_LABEL}, &ds));
	CHECK(ds.n == 1 && ds.shape[0] == 2 && ds.x && ds.x[0] == 1 && ds.x[1] == 2, "tab-delimited csv with quotes");
	clg_dataset_free(&ds);
	write_text(tpath("tab2.csv"), "1\t\t2\n");
	CHECK_FAILS(clg_csv_read(tpath("tab2.csv"), &(clg_csv_opts){'\t', 0, CLG_CSV_NO_LABEL}, &ds), CLG_ERR_FORMAT,
		    "tab2.csv");
	CHECK(strstr(clg_last_error(), "column 2") != NULL, "an empty tab-delimited cell: %s", clg_last_error());
	write_text(tpath("bad.csv"), "1,2,0\n3,abc,1\n");
	CHECK_FAILS(clg_csv_read(tpath("bad.csv"), &(clg_csv_opts){',', 0, 2}, &ds), CLG_ERR_FORMAT, "bad.csv");
	CHECK(strstr(clg_last_error(), ":2:") && strstr(clg_last_error(), "abc"), "bad cell message: %s", clg_last_error());
	write_text(tpath("cols.csv"), "1,2,0\n3,4\n");
	CHECK_FAILS(clg_csv_read(tpath("cols.csv"), &(clg_csv_opts){',', 0, 2}, &ds), CLG_ERR_FORMAT, "cols.csv");
	write_text(tpath("label.csv"), "1,2,0\n3,4,1.5\n");
	CHECK_FAILS(clg_csv_read(tpath("label.csv"), &(clg_csv_opts){',', 0, 2}, &ds), CLG_ERR_FORMAT, "label.csv");
	write_text(tpath("empty.csv"), "a,b\n\n");
	CHECK_FAILS(clg_csv_read(tpath("empty.csv"), NULL, &ds), CLG_ERR_FORMAT, "empty.csv");
	write_text(tpath("quote.csv"), "1,\"2\n");
	CHECK_FAILS(clg_csv_read(tpath("quote.csv"), NULL, &ds), CLG_ERR_FORMAT, "quote.csv");
	write_text(tpath("nan.csv"), "1,nan\n");
	CHECK_FAILS(clg_csv_read(tpath("nan.csv"), &(clg_csv_opts){',', 0, CLG_CSV_NO_LABEL}, &ds), CLG_ERR_FORMAT,
		    "nan.csv");
	CHECK_FAILS(clg_csv_read(tpath("nope.csv"), NULL, &ds), CLG_ERR_IO, "nope.csv");
}

static void test_text(void)
{
	clg_text t;
	clg_dataset ds;
	const char *s = "hello world, hello text!";
	int32_t ids[8];
	char back[9] = {0};

	write_text(tpath("t.txt"), s);
	CHECK_OK(clg_text_load(tpath("t.txt"), 0.25, &t));
	CHECK(t.n == 24 && t.n_train == 18 && t.vocab_size == 12, "text: n %lld train %lld vocab %d", (long long)t.n,
	      (long long)t.n_train, t.vocab_size);
	CHECK(t.vocab_size > 2 && t.vocab[0] == ' ' && t.vocab[1] == '!' && t.vocab[t.vocab_size - 1] == 'x',
	      "vocabulary sorted by byte");
	if (t.ids) {
		int bad = 0;
		for (int i = 0; i < t.n; i++)
			bad += t.vocab[t.ids[i]] != (unsigned char)s[i];
		CHECK(bad == 0, "text ids decode to the text (%d wrong)", bad);
	}
	CHECK_OK(clg_text_encode(&t, "hello", 5, ids));
	CHECK_OK(clg_text_decode(&t, ids, 5, back));
	CHECK(strcmp(back, "hello") == 0, "encode/decode: '%s'", back);
	CHECK(clg_text_encode(&t, "hz", 2, ids) == CLG_ERR_INVALID, "unknown byte rejected");
	ids[0] = t.vocab_size;
	CHECK(clg_text_decode(&t, ids, 1, back) == CLG_ERR_INVALID, "unknown id rejected");

	CHECK_OK(clg_text_windows(&t, 0, 4, 2, &ds));
	/* training part of 18 tokens: windows start at 0, 2, ..., 12 (start + 5 <= 18) */
	CHECK(ds.n == 7 && ds.x_dtype == CLG_I32 && ds.xi && !ds.x && ds.y_numel == 4 && ds.num_classes == t.vocab_size,
	      "text windows: n %lld", (long long)ds.n);
	if (ds.n == 7 && ds.xi) {
		int bad = 0;
		for (int i = 0; i < 7; i++)
			for (int k = 0; k < 4; k++)
				bad += ds.xi[i * 4 + k] != t.ids[2 * i + k] || ds.y[i * 4 + k] != t.ids[2 * i + k + 1];
		CHECK(bad == 0, "text windows: %d wrong ids", bad);
	}
	clg_dataset_free(&ds);
	CHECK_OK(clg_text_windows(&t, 1, 3, 1, &ds));
	CHECK(ds.n == 3 && ds.xi && ds.xi[0] == t.ids[18] && ds.y[0] == t.ids[19], "validation windows");
	clg_dataset_free(&ds);
	CHECK(clg_text_windows(&t, 1, 6, 1, &ds) == CLG_ERR_INVALID, "windows longer than the part rejected");
	clg_text_free(&t);
	write_text(tpath("one.txt"), "a");
	CHECK_FAILS(clg_text_load(tpath("one.txt"), 0.1, &t), CLG_ERR_FORMAT, "one.txt");
	CHECK_FAILS(clg_text_load(tpath("none.txt"), 0.1, &t), CLG_ERR_IO, "none.txt");
	/* bounded: a device that never ends stops at its first NUL, as does a file holding one */
	if (access("/dev/zero", R_OK) == 0)
		CHECK_FAILS(clg_text_load("/dev/zero", 0.1, &t), CLG_ERR_FORMAT, "NUL byte");
	{
		FILE *f = fopen(tpath("nul.txt"), "wb");
		fwrite("abc\0def", 1, 7, f);
		fclose(f);
		CHECK_FAILS(clg_text_load(tpath("nul.txt"), 0.1, &t), CLG_ERR_FORMAT, "NUL byte");
	}
	/* the limit: a regular file over it is refused from its size, a pipe once it has sent that much */
	{
		char *buf = NULL, big[5000];
		size_t len = 0;
		pid_t pid;
		memset(big, 'a', sizeof(big));
		big[sizeof(big) - 1] = 0;
		write_text(tpath("big.txt"), big);
		CHECK_FAILS(clg_read_text_file(tpath("big.txt"), 1000, &buf, &len), CLG_ERR_FORMAT, "limit");
		CHECK_OK(clg_read_text_file(tpath("big.txt"), 4999, &buf, &len));
		CHECK(len == 4999 && buf && buf[4998] == 'a' && !buf[4999], "a file at the limit is read whole");
		free(buf);
		buf = NULL;
		unlink(tpath("fifo"));
		CHECK(mkfifo(tpath("fifo"), 0600) == 0, "mkfifo");
		pid = fork();
		if (pid == 0) { /* 299940 bytes into the pipe, then an end */
			FILE *w = fopen(tpath("fifo"), "wb");
			for (int i = 0; w && i < 60; i++)
				fwrite(big, 1, 4999, w);
			if (w)
				fclose(w);
			_exit(0);
		}
		CHECK_FAILS(clg_read_text_file(tpath("fifo"), 100000, &buf, &len), CLG_ERR_FORMAT, "limit");
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		pid = fork();
		if (pid == 0) {
			FILE *w = fopen(tpath("fifo"), "wb");
			for (int i = 0; w && i < 60; i++)
				fwrite(big, 1, 4999, w);
			if (w)
				fclose(w);
			_exit(0);
		}
		CHECK_OK(clg_read_text_file(tpath("fifo"), 300000, &buf, &len));
		CHECK(len == 60 * 4999, "a pipe under the limit is read whole (%zu bytes)", len);
		free(buf);
		waitpid(pid, NULL, 0);
	}
}

static void test_norm_onehot(void)
{
	clg_dataset ds;
	int64_t shape[2] = {2, 2};
	float mean[2], std[2];
	float oh[6];
	int32_t lab[2] = {2, 0};

	CHECK_OK(clg_dataset_init(&ds, 2, 2, shape, CLG_F32, 1));
	/* channel 0 values 1, 3, 5, 7; channel 1 values 10 (all) */
	ds.x[0] = 1, ds.x[1] = 3, ds.x[2] = 10, ds.x[3] = 10;
	ds.x[4] = 5, ds.x[5] = 7, ds.x[6] = 10, ds.x[7] = 10;
	CHECK_OK(clg_dataset_channel_stats(&ds, 2, mean, std));
	CHECK(mean[0] == 4 && fabsf(std[0] - sqrtf(5)) < 1e-6f && mean[1] == 10 && std[1] == 0, "stats %g %g %g %g",
	      mean[0], std[0], mean[1], std[1]);
	CHECK(clg_dataset_normalize(&ds, 2, mean, std) == CLG_ERR_INVALID, "std 0 rejected");
	std[1] = 2;
	CHECK_OK(clg_dataset_normalize(&ds, 2, mean, std));
	CHECK(fabsf(ds.x[0] + 3 / sqrtf(5)) < 1e-6f && ds.x[2] == 0 && fabsf(ds.x[5] - 3 / sqrtf(5)) < 1e-6f,
	      "normalized values %g %g %g", ds.x[0], ds.x[2], ds.x[5]);
	CHECK(clg_dataset_channel_stats(&ds, 3, mean, std) == CLG_ERR_INVALID, "3 channels do not divide 4 values");
	clg_dataset_free(&ds);

	CHECK_OK(clg_one_hot_host(lab, 2, 3, oh));
	CHECK(oh[0] == 0 && oh[1] == 0 && oh[2] == 1 && oh[3] == 1 && oh[4] == 0 && oh[5] == 0, "one-hot values");
	lab[1] = 3;
	CHECK(clg_one_hot_host(lab, 2, 3, oh) == CLG_ERR_INVALID && strstr(clg_last_error(), "position 1"),
	      "label out of range rejected: %s", clg_last_error());
}

/* A dataset whose sample i has features (i, 100 + i) and label i % 4. */
static void make_index_dataset(clg_dataset *ds, int64_t n)
{
	int64_t shape[1] = {2};
	if (clg_dataset_init(ds, n, 1, shape, CLG_F32, 1) != CLG_OK) {
		fprintf(stderr, "dataset_init: %s\n", clg_last_error());
		exit(1);
	}
	for (int64_t i = 0; i < n; i++) {
		ds->x[2 * i] = (float)i;
		ds->x[2 * i + 1] = (float)(100 + i);
		ds->y[i] = (int32_t)(i % 4);
	}
	ds->num_classes = 4;
}

/* One epoch of sample indices through the host interface; returns how many. */
static int64_t host_epoch(clg_loader *l, int64_t *order, int64_t *sizes, int64_t *nbatches)
{
	float x[2 * 64];
	int32_t y[64];
	int64_t k, at = 0;
	*nbatches = 0;
	for (;;) {
		CHECK_OK(clg_loader_next_host(l, x, y, &k));
		if (k == 0)
			break;
		for (int64_t i = 0; i < k; i++) {
			order[at + i] = (int64_t)x[2 * i];
			CHECK(x[2 * i + 1] == 100 + x[2 * i] && y[i] == (int32_t)x[2 * i] % 4, "sample %g: features and label agree",
			      x[2 * i]);
		}
		if (sizes)
			sizes[*nbatches] = k;
		(*nbatches)++;
		at += k;
		if (*nbatches > 100)
			break;
	}
	return at;
}

static void test_loader_host(void)
{
	clg_dataset ds;
	clg_loader *a, *b;
	int64_t o1[10], o2[10], sizes[8], nb, seen[10];
	static const int64_t golden_e0[10] = {6, 5, 1, 2, 8, 9, 3, 7, 4, 0};
	static const int64_t golden_e1[10] = {4, 2, 6, 3, 5, 9, 7, 0, 8, 1};
	static const int64_t golden_s7[10] = {5, 1, 4, 7, 9, 8, 3, 2, 0, 6};
	clg_loader_state st;
	char sbuf[128];

	make_index_dataset(&ds, 10);
	CHECK_OK(clg_loader_new(&ds, 3, 42, CLG_LOADER_SHUFFLE, &a));
	CHECK(clg_loader_batches_per_epoch(a) == 4, "4 batches per epoch");
	CHECK(host_epoch(a, o1, sizes, &nb) == 10 && nb == 4 && sizes[0] == 3 && sizes[3] == 1,
	      "10 samples in batches 3, 3, 3, 1 (%lld batches)", (long long)nb);
	/* every sample once */
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < 10; i++)
		if (o1[i] >= 0 && o1[i] < 10)
			seen[o1[i]]++;
	for (int i = 0; i < 10; i++)
		CHECK(seen[i] == 1, "sample %d seen %lld times in an epoch", i, (long long)seen[i]);
	/* the same order on every machine: the documented splitmix64 Fisher-Yates (see
	 * data_loader.c), checked against an independent implementation */
	CHECK(memcmp(o1, golden_e0, sizeof(o1)) == 0, "seed 42 epoch 0 order: %lld %lld %lld %lld ...", (long long)o1[0],
	      (long long)o1[1], (long long)o1[2], (long long)o1[3]);
	CHECK(host_epoch(a, o2, NULL, &nb) == 10, "second epoch");
	CHECK(memcmp(o2, golden_e1, sizeof(o2)) == 0, "seed 42 epoch 1 order differs from epoch 0 as expected");
	CHECK(memcmp(o1, o2, sizeof(o1)) != 0, "epochs 0 and 1 differ");
	clg_loader_get_state(a, &st);
	CHECK(st.epoch == 2 && st.pos == 0 && st.seed == 42, "state after two epochs");
	clg_loader_free(a);

	/* same seed: same order; other seed: other order */
	CHECK_OK(clg_loader_new(&ds, 4, 42, CLG_LOADER_SHUFFLE, &a));
	host_epoch(a, o2, NULL, &nb);
	CHECK(memcmp(o1, o2, sizeof(o1)) == 0, "same seed, other batch size: same order");
	clg_loader_free(a);
	CHECK_OK(clg_loader_new(&ds, 4, 7, CLG_LOADER_SHUFFLE, &a));
	host_epoch(a, o2, NULL, &nb);
	CHECK(memcmp(o2, golden_s7, sizeof(o2)) == 0 && memcmp(o1, o2, sizeof(o1)) != 0, "seed 7 gives its own order");
	clg_loader_free(a);

	/* no shuffle: 0..n-1; drop_last drops the partial batch */
	CHECK_OK(clg_loader_new(&ds, 3, 42, CLG_LOADER_DROP_LAST, &a));
	CHECK(host_epoch(a, o2, sizes, &nb) == 9 && nb == 3, "drop_last: 9 samples in 3 batches");
	for (int i = 0; i < 9; i++)
		CHECK(o2[i] == i, "unshuffled order at %d: %lld", i, (long long)o2[i]);
	clg_loader_free(a);

	/* resume: a loader restored from a saved state hands out the same batches */
	CHECK_OK(clg_loader_new(&ds, 3, 99, CLG_LOADER_SHUFFLE, &a));
	{
		float xa[6], xb[6];
		int64_t ka, kb;
		for (int i = 0; i < 2; i++)
			CHECK_OK(clg_loader_next_host(a, xa, NULL, &ka));
		clg_loader_get_state(a, &st);
		CHECK(st.epoch == 0 && st.pos == 6, "state after 2 batches: epoch %llu pos %lld", (unsigned long long)st.epoch,
		      (long long)st.pos);
		CHECK_OK(clg_loader_state_format(&st, sbuf, sizeof(sbuf)));
		CHECK(strcmp(sbuf, "seed=99 epoch=0 pos=6") == 0, "state string '%s'", sbuf);
		memset(&st, 0, sizeof(st));
		CHECK_OK(clg_loader_state_parse(sbuf, &st));
		CHECK(clg_loader_state_parse("seed=1 epoch=x pos=0", &st) == CLG_ERR_FORMAT, "bad state string rejected");
		CHECK(clg_loader_state_format(&st, sbuf, 8) == CLG_ERR_INVALID, "short buffer rejected");
		CHECK_OK(clg_loader_new(&ds, 3, 1, CLG_LOADER_SHUFFLE, &b));
		CHECK_OK(clg_loader_set_state(b, &st));
		for (int i = 0; i < 9; i++) { /* across two epoch ends */
			CHECK_OK(clg_loader_next_host(a, xa, NULL, &ka));
			CHECK_OK(clg_loader_next_host(b, xb, NULL, &kb));
			CHECK(ka == kb && memcmp(xa, xb, (size_t)ka * 2 * sizeof(float)) == 0, "resumed batch %d differs", i);
		}
		st.pos = 11;
		CHECK(clg_loader_set_state(b, &st) == CLG_ERR_INVALID, "position past the end rejected");
		clg_loader_free(b);
	}
	clg_loader_free(a);

	CHECK(clg_loader_new(&ds, 0, 1, 0, &a) == CLG_ERR_INVALID && !a, "batch 0 rejected");
	CHECK(clg_loader_new(&ds, 11, 1, CLG_LOADER_DROP_LAST, &a) == CLG_ERR_INVALID, "drop_last without a batch rejected");
	clg_dataset_free(&ds);
}

/* Epochs of batches as tensors on one device, compared with the host interface. */
static void test_loader_device(int dev)
{
	clg_backend *be;
	clg_dataset ds;
	clg_loader *a, *h;
	clg_tensor *x, *y;
	clg_loader_state st;

	if (clg_backend_open(dev, &be) != CLG_OK) {
		printf("device %d: cannot open (%s): skipped\n", dev, clg_last_error());
		return;
	}
	printf("loader on device %d (%s)\n", dev, be->info.name);
	make_index_dataset(&ds, 10);
	CHECK_OK(clg_loader_new(&ds, 4, 5, CLG_LOADER_SHUFFLE, &a));
	CHECK_OK(clg_loader_new(&ds, 4, 5, CLG_LOADER_SHUFFLE, &h));
	for (int step = 0; step < 9; step++) { /* 3 epochs of 3 batches + end markers */
		float hx[8], dx[8];
		int32_t hy[4], dy[4];
		int64_t k;
		clg_scope_begin(); /* the batches belong to the scope, the loader's next one does not */
		CHECK_OK(clg_loader_next(a, be, &x, &y));
		CHECK_OK(clg_loader_next_host(h, hx, hy, &k));
		CHECK((x == NULL) == (k == 0), "step %d: end of epoch at the same time", step);
		if (x && y && k) {
			CHECK(clg_ndim(x) == 2 && clg_shape(x)[0] == k && clg_shape(x)[1] == 2 && clg_dtype_of(x) == CLG_F32,
			      "x shape");
			CHECK(clg_ndim(y) == 1 && clg_shape(y)[0] == k && clg_dtype_of(y) == CLG_I32, "y shape");
			CHECK_OK(clg_to_host(x, dx, (size_t)k * 2 * sizeof(float)));
			CHECK_OK(clg_to_host(y, dy, (size_t)k * sizeof(int32_t)));
			CHECK(memcmp(dx, hx, (size_t)k * 2 * sizeof(float)) == 0 && memcmp(dy, hy, (size_t)k * sizeof(int32_t)) == 0,
			      "step %d: device batch equals host batch", step);
		}
		clg_scope_end();
		clg_loader_get_state(a, &st);
		if (step == 4) {
			/* resume on a third loader from here */
			clg_loader *r;
			float rx[8], ax[8];
			CHECK_OK(clg_loader_new(&ds, 4, 0, CLG_LOADER_SHUFFLE, &r));
			CHECK_OK(clg_loader_set_state(r, &st));
			for (int i = 0; i < 3; i++) {
				clg_tensor *tx = NULL;
				CHECK_OK(clg_loader_next(r, be, &tx, NULL));
				CHECK_OK(clg_loader_next(a, be, &x, NULL));
				CHECK((tx == NULL) == (x == NULL), "resumed loader: end markers agree");
				if (tx && x && clg_numel(tx) == clg_numel(x)) {
					CHECK_OK(clg_to_host(tx, rx, (size_t)clg_numel(tx) * sizeof(float)));
					CHECK_OK(clg_to_host(x, ax, (size_t)clg_numel(x) * sizeof(float)));
					CHECK(memcmp(rx, ax, (size_t)clg_numel(x) * sizeof(float)) == 0, "resumed batch %d", i);
				}
				clg_free(tx);
				clg_free(x);
			}
			clg_loader_free(r);
			CHECK_OK(clg_loader_set_state(a, &st)); /* rewind a to keep step with h */
		}
	}
	clg_loader_free(a);
	clg_loader_free(h);

	/* one-hot labels */
	CHECK_OK(clg_loader_new(&ds, 4, 5, CLG_LOADER_ONE_HOT, &a));
	CHECK_OK(clg_loader_next(a, be, &x, &y));
	if (x && y) {
		float oh[16];
		CHECK(clg_ndim(y) == 2 && clg_shape(y)[0] == 4 && clg_shape(y)[1] == 4 && clg_dtype_of(y) == CLG_F32,
		      "one-hot y shape");
		CHECK_OK(clg_to_host(y, oh, sizeof(oh)));
		for (int i = 0; i < 4; i++) /* unshuffled: sample i has label i % 4 */
			for (int c = 0; c < 4; c++)
				CHECK(oh[i * 4 + c] == (c == i % 4 ? 1.0f : 0.0f), "one-hot (%d, %d)", i, c);
	}
	clg_free(x);
	clg_free(y);
	clg_loader_free(a);
	clg_dataset_free(&ds);

	/* token windows: int32 x (B, T) and y (B, T) */
	{
		int64_t shape[1] = {3};
		CHECK_OK(clg_dataset_init(&ds, 5, 1, shape, CLG_I32, 3));
		for (int i = 0; i < 15; i++)
			ds.xi[i] = i, ds.y[i] = i + 1;
		ds.num_classes = 16;
		CHECK_OK(clg_loader_new(&ds, 2, 1, 0, &a));
		CHECK_OK(clg_loader_next(a, be, &x, &y));
		if (x && y) {
			int32_t v[6];
			CHECK(clg_dtype_of(x) == CLG_I32 && clg_ndim(x) == 2 && clg_shape(x)[1] == 3 && clg_ndim(y) == 2 &&
				      clg_shape(y)[1] == 3, "token batch shapes");
			CHECK_OK(clg_to_host(y, v, sizeof(v)));
			CHECK(v[0] == 1 && v[5] == 6, "token targets");
		}
		clg_free(x);
		clg_free(y);
		clg_loader_free(a);
		clg_dataset_free(&ds);
	}
	{
		clg_tensor *t = NULL;
		int32_t lab[3] = {1, 0, 1};
		float v[6];
		CHECK_OK(clg_one_hot(be, lab, 3, 2, &t));
		if (t) {
			CHECK_OK(clg_to_host(t, v, sizeof(v)));
			CHECK(v[0] == 0 && v[1] == 1 && v[2] == 1 && v[3] == 0, "clg_one_hot tensor");
		}
		clg_free(t);
	}
	clg_backend_close(be);
}

/* The real Fashion-MNIST, if installed. */
static void test_fashion(const char *dir)
{
	struct stat sb;
	static const char *const splits[2] = {"train", "t10k"};
	static const int64_t counts[2] = {60000, 10000};
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		printf("Fashion-MNIST not found in %s: that part skipped\n", dir);
		return;
	}
	for (int s = 0; s < 2; s++) {
		clg_dataset ds;
		int64_t hist[10] = {0};
		int other = 0;
		CHECK_OK(clg_dataset_load_idx(dir, splits[s], &ds));
		if (!ds.y)
			continue;
		CHECK(ds.n == counts[s] && ds.shape[0] == 1 && ds.shape[1] == 28 && ds.shape[2] == 28 && ds.num_classes == 10,
		      "Fashion-MNIST %s: n %lld shape (%lld, %lld, %lld) classes %d", splits[s], (long long)ds.n,
		      (long long)ds.shape[0], (long long)ds.shape[1], (long long)ds.shape[2], ds.num_classes);
		for (int64_t i = 0; i < ds.n; i++) {
			if (ds.y[i] >= 0 && ds.y[i] < 10)
				hist[ds.y[i]]++;
			else
				other++;
		}
		for (int c = 0; c < 10; c++)
			CHECK(hist[c] == counts[s] / 10, "Fashion-MNIST %s: class %d has %lld samples", splits[s], c,
			      (long long)hist[c]);
		CHECK(other == 0, "labels outside 0..9");
		{
			float lo = 1, hi = 0;
			for (int64_t i = 0; i < ds.n * 784; i += 101) {
				lo = ds.x[i] < lo ? ds.x[i] : lo;
				hi = ds.x[i] > hi ? ds.x[i] : hi;
			}
			CHECK(lo >= 0 && hi <= 1 && hi > 0.5f, "pixels scaled to [0, 1]: %g..%g", lo, hi);
		}
		printf("Fashion-MNIST %s: %lld samples, 28x28, 10 classes of %lld\n", splits[s], (long long)ds.n,
		       (long long)hist[0]);
		clg_dataset_free(&ds);
	}
}

/* Subsets, index selections and splits copy samples, labels and float targets; a loader over float
 * targets hands out float32 y; bad ranges and indices are refused with their numbers. */
static void test_subsets(void)
{
	clg_dataset ds, a, b, f, c;
	int64_t idx[3] = {5, 0, 5}, shape[1] = {2}, seen[40] = {0};

	make_index_dataset(&ds, 40);
	CHECK_OK(clg_dataset_subset(&ds, 10, 5, &a));
	CHECK(a.n == 5 && a.x[0] == 10 && a.x[9] == 114 && a.y[4] == 14 % 4 && a.num_classes == 4, "subset [10, 15)");
	clg_dataset_free(&a);
	CHECK_OK(clg_dataset_subset(&ds, 30, -1, &a));
	CHECK(a.n == 10 && a.x[18] == 39, "subset to the end: %lld", (long long)a.n);
	clg_dataset_free(&a);
	CHECK(clg_dataset_subset(&ds, 38, 5, &a) == CLG_ERR_INVALID && strstr(clg_last_error(), "[38, 38 + 5)") && a.n == 0,
	      "subset past the end refused: %s", clg_last_error());
	CHECK_OK(clg_dataset_select(&ds, idx, 3, &a));
	CHECK(a.n == 3 && a.x[0] == 5 && a.x[2] == 0 && a.x[4] == 5 && a.y[0] == 1, "select 5, 0, 5");
	clg_dataset_free(&a);
	idx[1] = 40;
	CHECK(clg_dataset_select(&ds, idx, 3, &a) == CLG_ERR_INVALID && strstr(clg_last_error(), "index 40 (position 1)"),
	      "index out of range refused: %s", clg_last_error());
	/* split: a permutation from the seed, every sample once; seed 0 keeps the order */
	CHECK_OK(clg_dataset_split(&ds, 30, 7, &a, &b));
	CHECK(a.n == 30 && b.n == 10, "split 30 + 10");
	for (int64_t i = 0; i < a.n; i++)
		seen[(int)a.x[2 * i]]++;
	for (int64_t i = 0; i < b.n; i++)
		seen[(int)b.x[2 * i]]++;
	int once = 1, moved = 0;
	for (int i = 0; i < 40; i++)
		once &= seen[i] == 1;
	for (int64_t i = 0; i < a.n; i++)
		moved += a.x[2 * i] != (float)i;
	CHECK(once && moved > 0, "split: each sample once (%d), shuffled (%d moved)", once, moved);
	clg_dataset_free(&a);
	clg_dataset_free(&b);
	CHECK_OK(clg_dataset_split(&ds, 4, 0, &a, NULL));
	CHECK(a.n == 4 && a.x[6] == 3, "split with seed 0 keeps the order");
	clg_dataset_free(&a);
	/* float targets: copied by subsets, float32 y from the loader */
	CHECK_OK(clg_dataset_init_ex(&f, 6, 1, shape, CLG_F32, 2, CLG_F32));
	CHECK(f.yf && !f.y, "float targets allocated");
	for (int i = 0; i < 12; i++)
		f.x[i] = (float)i, f.yf[i] = 0.5f * (float)i;
	CHECK_OK(clg_dataset_subset(&f, 2, 3, &c));
	CHECK(c.yf && c.yf[0] == 2.0f && c.yf[5] == 4.5f, "float targets copied");
	clg_backend *be;
	clg_loader *l;
	clg_tensor *x, *y;
	float yv[6];
	CHECK_OK(clg_backend_open(0, &be));
	CHECK(clg_loader_new(&c, 3, 0, CLG_LOADER_ONE_HOT, &l) == CLG_ERR_INVALID && strstr(clg_last_error(), "float targets"),
	      "one-hot of float targets refused: %s", clg_last_error());
	CHECK_OK(clg_loader_new(&c, 3, 0, 0, &l));
	clg_scope_begin();
	CHECK_OK(clg_loader_next(l, be, &x, &y));
	CHECK(y && clg_dtype_of(y) == CLG_F32 && clg_ndim(y) == 2 && clg_shape(y)[1] == 2, "float32 (B, 2) targets");
	CHECK(y && !clg_to_host(y, yv, sizeof(yv)) && yv[0] == 2.0f && yv[5] == 4.5f, "target values");
	clg_scope_end();
	clg_loader_free(l);
	clg_backend_close(be);
	clg_dataset_free(&c);
	clg_dataset_free(&f);
	clg_dataset_free(&ds);
}

int main(int argc, char **argv)
{
	tmp = t_tmpdir();
	if (!tmp) {
		fprintf(stderr, "no temporary folder\n");
		return 1;
	}
	test_idx();
	test_sizes();
	test_cifar();
	test_csv();
	test_text();
	test_norm_onehot();
	test_loader_host();
	test_subsets();
	test_loader_device(0);
	for (int d = 1; d <= t_opencl_count(); d++)
		test_loader_device(d);
	test_fashion(argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist");
	t_rmtree(tmp);
	free(tmp);
	return t_finish("test_data");
}
