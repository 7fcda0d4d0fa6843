/* GEMM tuning (backend/clg_tune.h): the tune file (format, atomic store, checked load), applying
 * it (CLBlast parameters, per-shape implementation and tile for cl_gemm.c), and the search.
 *
 * Tune file, one record a line (text, so a person can read what was chosen):
 *   clgrad-tune 1
 *   platform <name>            platform_version <v>        device <name>      driver <v>
 *   clblast Xgemm GEMMK=0 KREG=1 ...   (all 16 parameters; likewise XgemmDirect's 10, GemmRoutine's 1)
 *   shape <ta> <tb> <m> <n> <k> <batch> <own|clblast> <tm> <tn> <vw> <dm> <dn> <default GF/s> <tuned GF/s>
 *   # comments
 *   end <FNV-1a 64 of every byte before this line, hex>
 * A file whose header names another platform, device or driver, whose checksum does not match,
 * or with any line that does not parse, is ignored as a whole. */
#include "cl_tune.h"

#include "clg_tune.h"

#include <clblast_c.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TUNE_FORMAT "clgrad-tune 1"
#define TUNE_MAX_FILE 65536
#define TUNE_MAX_ENTRIES 64
#define TUNE_MAX_DEVICES 16
/* a stored shape applies to a call of the same layout within this distance (sum over m, n, k of
 * |log2 ratio|): 2 allows, say, m and n each half or double */
#define TUNE_NEAR 2.0
/* a choice other than the device's default needs to be this much faster */
#define TUNE_MARGIN 0.95

/* ---- CLBlast parameters ---------------------------------------------------------------------- */

enum { GEMMK, KREG, KWG, KWI, MDIMA, MDIMC, MWG, NDIMB, NDIMC, NWG, SA, SB, STRM, STRN, VWM, VWN, NX };
static const char *const xg_names[NX] = {"GEMMK", "KREG", "KWG",  "KWI", "MDIMA", "MDIMC", "MWG",  "NDIMB",
					 "NDIMC", "NWG",  "SA",   "SB",  "STRM",  "STRN",  "VWM",  "VWN"};
enum { KWID, MDIMAD, MDIMCD, NDIMBD, NDIMCD, PADA, PADB, VWMD, VWND, WGD, ND };
static const char *const xd_names[ND] = {"KWID", "MDIMAD", "MDIMCD", "NDIMBD", "NDIMCD",
					 "PADA", "PADB",   "VWMD",   "VWND",   "WGD"};
static const char *const gr_name = "XGEMM_MIN_INDIRECT_SIZE";

/* Values the search draws from (GEMMK 0 and KREG 1 only: the other Xgemm kernel suits few GPUs). */
static const size_t xg_vals[NX][6] = {
	[GEMMK] = {0}, [KREG] = {1},          [KWG] = {8, 16, 32},        [KWI] = {1, 2, 4},
	[MDIMA] = {2, 4, 8, 16, 32},          [MDIMC] = {2, 4, 8, 16, 32}, [MWG] = {16, 32, 64, 128},
	[NDIMB] = {2, 4, 8, 16, 32},          [NDIMC] = {2, 4, 8, 16, 32}, [NWG] = {16, 32, 64, 128},
	[SA] = {0, 1}, [SB] = {0, 1}, [STRM] = {0, 1}, [STRN] = {0, 1}, [VWM] = {1, 2, 4, 8}, [VWN] = {1, 2, 4, 8},
};
static const size_t xd_vals[ND][6] = {
	[KWID] = {2, 8, 16},          [MDIMAD] = {2, 4, 8, 16, 32}, [MDIMCD] = {2, 4, 8, 16, 32},
	[NDIMBD] = {2, 4, 8, 16, 32}, [NDIMCD] = {2, 4, 8, 16, 32}, [PADA] = {0, 1},
	[PADB] = {0, 1},              [VWMD] = {1, 2, 4, 8},        [VWND] = {1, 2, 4, 8},
	[WGD] = {8, 16, 32, 64},
};

typedef struct {
	size_t max_wg, max_item[2], local_mem;
	int cpu; /* CPU devices: work-groups of at most 64 (PoCL builds large ones very slowly) */
} dev_limits;

static int nvals(const size_t *v)
{
	int n = 1;
	while (n < 6 && v[n])
		n++;
	return n;
}

static int mult(size_t x, size_t d)
{
	return d && x % d == 0;
}

/* The legality rules of CLBlast 1.5's Xgemm (as its tuner states them), plus the device's limits. */
static int xg_legal(const size_t *p, const dev_limits *L)
{
	size_t wg = p[MDIMC] * p[NDIMC];

	if (p[GEMMK] != 0 || p[KREG] != 1 || !mult(p[KWG], p[KWI]) || !mult(p[MWG], p[MDIMC] * p[VWM]) ||
	    !mult(p[NWG], p[NDIMC] * p[VWN]) || !mult(p[MWG], p[MDIMA] * p[VWM]) || !mult(p[NWG], p[NDIMB] * p[VWN]))
		return 0;
	if (!mult(wg, p[MDIMA]) || !mult(wg, p[NDIMB]) || !mult(p[KWG], wg / p[MDIMA]) || !mult(p[KWG], wg / p[NDIMB]))
		return 0;
	if (wg > L->max_wg || (L->cpu && wg > 64) || p[MDIMC] > L->max_item[0] || p[NDIMC] > L->max_item[1] ||
	    4 * (p[SA] * p[KWG] * p[MWG] + p[SB] * p[KWG] * p[NWG]) > L->local_mem)
		return 0;
	/* per work-item register tile: bounded so a candidate cannot take minutes to compile (PoCL
	 * took about 100 s for a 32 x 4 tile) */
	return (p[MWG] / p[MDIMC]) * (p[NWG] / p[NDIMC]) <= 64;
}

static int xd_legal(const size_t *p, const dev_limits *L)
{
	size_t wg = p[MDIMCD] * p[NDIMCD], w = p[WGD];

	if (!mult(w, p[KWID]) || !mult(w, p[MDIMCD] * p[VWMD]) || !mult(w, p[NDIMCD] * p[VWND]) ||
	    !mult(w, p[MDIMAD] * p[VWMD]) || !mult(w, p[NDIMBD] * p[VWND]))
		return 0;
	if (!mult(wg, p[MDIMAD]) || !mult(wg, p[NDIMBD]) || !mult(w, wg / p[MDIMAD]) || !mult(w, wg / p[NDIMBD]))
		return 0;
	if (wg > L->max_wg || (L->cpu && wg > 64) || p[MDIMCD] > L->max_item[0] || p[NDIMCD] > L->max_item[1] ||
	    4 * (w * (w + p[PADA]) + w * (w + p[PADB])) > L->local_mem)
		return 0;
	return (w / p[MDIMCD]) * (w / p[NDIMCD]) <= 64;
}

static void limits_of(clg_backend *be, dev_limits *L)
{
	cl_device_id d = clg_cl_of(be)->device;
	size_t items[3] = {1, 1, 1};
	cl_ulong lm = 0;

	L->max_wg = 1;
	clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(L->max_wg), &L->max_wg, NULL);
	clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(items), items, NULL);
	clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(lm), &lm, NULL);
	L->max_item[0] = items[0];
	L->max_item[1] = items[1];
	L->local_mem = (size_t)lm;
	L->cpu = be->info.type == CLG_DEV_CPU;
}

static void params_str(const char *const *names, const size_t *v, int n, char *buf, size_t len)
{
	size_t p = 0;
	buf[0] = 0;
	for (int i = 0; i < n && p < len; i++)
		p += (size_t)snprintf(buf + p, len - p, "%s%s=%zu", i ? " " : "", names[i], v[i]);
}

static clg_status clblast_set(clg_backend *be, const char *kernel, const char *const *names, const size_t *v, int n)
{
	CLBlastStatusCode s = CLBlastOverrideParameters(clg_cl_of(be)->device, kernel, CLBlastPrecisionSingle,
							(size_t)n, (const char **)names, v);
	if (s != CLBlastSuccess)
		return clg_cl_fail(be, "tune", (cl_int)s, "CLBlastOverrideParameters(%s)", kernel);
	return CLG_OK;
}

/* ---- per-device state: what the tune file said ----------------------------------------------- */

typedef struct {
	int ta, tb;
	int64_t m, n, k, batch;
	clg_cl_gemm_impl impl;
	clg_cl_gemm_tile tile;
	double default_gflops, tuned_gflops;
	char label[40]; /* written as a comment; not read back */
} tune_entry;

typedef struct {
	int has_xg, has_xd, has_gr;
	size_t xg[NX], xd[ND], gr;
	tune_entry e[TUNE_MAX_ENTRIES];
	int ne;
} tune_data;

typedef struct {
	cl_device_id dev;
	int tried;           /* loading was attempted */
	clg_tune_state st;
	tune_data d;
} dev_state;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static dev_state g_dev[TUNE_MAX_DEVICES];
static int g_ndev;

/* The state of be's device, created empty; NULL when the table is full. Caller holds g_lock. */
static dev_state *state_of(clg_backend *be)
{
	cl_device_id d = clg_cl_of(be)->device;
	for (int i = 0; i < g_ndev; i++)
		if (g_dev[i].dev == d)
			return &g_dev[i];
	if (g_ndev == TUNE_MAX_DEVICES)
		return NULL;
	memset(&g_dev[g_ndev], 0, sizeof(g_dev[0]));
	g_dev[g_ndev].dev = d;
	return &g_dev[g_ndev++];
}

/* ---- the file ----------------------------------------------------------------------------------- */

/* Device strings as written in the file: one line, no leading or trailing blanks. */
static void one_line(const char *s, char *buf, size_t len)
{
	size_t n = 0;
	while (*s == ' ')
		s++;
	for (; *s && n + 1 < len; s++)
		buf[n++] = *s == '\n' || *s == '\r' ? ' ' : *s;
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = 0;
}

clg_status clg_tune_file_path(clg_backend *be, char *buf, size_t len)
{
	const clg_device_info *i = &be->info;
	char dir[900];
	uint64_t h = CLG_HASH_SEED;

	clg_cl_cache_dir(dir, sizeof(dir));
	if (!dir[0])
		return clg_fail(CLG_ERR_IO, "tune: no cache folder (CLGRAD_CACHE_DIR=0, or no HOME)");
	h = clg_hash64(h, i->platform, strlen(i->platform) + 1);
	h = clg_hash64(h, i->platform_version, strlen(i->platform_version) + 1);
	h = clg_hash64(h, i->name, strlen(i->name) + 1);
	h = clg_hash64(h, i->driver_version, strlen(i->driver_version) + 1);
	snprintf(buf, len, "%s/tune-%016llx.txt", dir, (unsigned long long)h);
	return CLG_OK;
}

typedef struct {
	char *p;
	size_t n, cap;
	int oom;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) CLG_PRINTF(2, 3);
static void sb_printf(strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int need;

	if (b->oom)
		return;
	va_start(ap, fmt);
	need = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (need < 0 || b->n + (size_t)need + 1 > b->cap) {
		size_t cap = (b->cap + (size_t)(need > 0 ? need : 0) + 1) * 2;
		char *q = realloc(b->p, cap);
		if (!q || need < 0) {
			b->oom = 1;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)need;
}

static void header_lines(clg_backend *be, strbuf *b)
{
	const clg_device_info *i = &be->info;
	char s[160];

	sb_printf(b, "%s\n", TUNE_FORMAT);
	one_line(i->platform, s, sizeof(s));
	sb_printf(b, "platform %s\n", s);
	one_line(i->platform_version, s, sizeof(s));
	sb_printf(b, "platform_version %s\n", s);
	one_line(i->name, s, sizeof(s));
	sb_printf(b, "device %s\n", s);
	one_line(i->driver_version, s, sizeof(s));
	sb_printf(b, "driver %s\n", s);
}

/* Writes d (with the shapes' labels as comments) to path atomically. */
static clg_status store_file(clg_backend *be, const char *path, const tune_data *d)
{
	static unsigned counter;
	strbuf b = {0};
	char tmp[1100], dir[1024], pbuf[400];
	FILE *f = NULL;
	clg_status st = CLG_OK;
	char *slash;

	header_lines(be, &b);
	if (d->has_xg) {
		params_str(xg_names, d->xg, NX, pbuf, sizeof(pbuf));
		sb_printf(&b, "clblast Xgemm %s\n", pbuf);
	}
	if (d->has_xd) {
		params_str(xd_names, d->xd, ND, pbuf, sizeof(pbuf));
		sb_printf(&b, "clblast XgemmDirect %s\n", pbuf);
	}
	if (d->has_gr)
		sb_printf(&b, "clblast GemmRoutine %s=%zu\n", gr_name, d->gr);
	sb_printf(&b, "# shape ta tb m n k batch impl tm tn vw dm dn default_gflops tuned_gflops\n");
	for (int i = 0; i < d->ne; i++) {
		const tune_entry *e = &d->e[i];
		if (e->label[0])
			sb_printf(&b, "# %s\n", e->label);
		sb_printf(&b, "shape %d %d %lld %lld %lld %lld %s %d %d %d %d %d %.1f %.1f\n", e->ta, e->tb,
			  (long long)e->m, (long long)e->n, (long long)e->k, (long long)e->batch,
			  e->impl == CLG_CL_GEMM_CLBLAST ? "clblast" : "own", e->tile.tm, e->tile.tn, e->tile.vw,
			  e->tile.dm, e->tile.dn, e->default_gflops, e->tuned_gflops);
	}
	if (b.oom) {
		st = clg_fail(CLG_ERR_OOM, "tune: out of host memory writing %s", path);
		goto out;
	}
	sb_printf(&b, "end %016llx\n", (unsigned long long)clg_hash64(CLG_HASH_SEED, b.p, b.n));
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	if (slash && clg_cl_mkdir_p(dir) != 0) {
		st = clg_fail(CLG_ERR_IO, "tune: cannot create %s: %s", dir, strerror(errno));
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", path, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
	f = fopen(tmp, "w");
	if (!f || b.oom || fwrite(b.p, 1, b.n, f) != b.n || fflush(f) != 0 || fsync(fileno(f)) != 0) {
		st = clg_fail(CLG_ERR_IO, "tune: cannot write %s: %s", tmp, strerror(errno));
		if (f)
			fclose(f);
		f = NULL;
		unlink(tmp);
		goto out;
	}
	fclose(f);
	if (rename(tmp, path) != 0) {
		st = clg_fail(CLG_ERR_IO, "tune: cannot rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
	}
out:
	free(b.p);
	return st;
}

/* "NAME=V NAME=V ..." with exactly the given names, in order. */
static int parse_params(const char *s, const char *const *names, int n, size_t *v)
{
	for (int i = 0; i < n; i++) {
		size_t l = strlen(names[i]);
		char *end;
		unsigned long long x;
		while (*s == ' ')
			s++;
		if (strncmp(s, names[i], l) != 0 || s[l] != '=')
			return -1;
		s += l + 1;
		errno = 0;
		x = strtoull(s, &end, 10);
		if (end == s || errno || x > 1000000)
			return -1;
		v[i] = (size_t)x;
		s = end;
	}
	while (*s == ' ')
		s++;
	return *s ? -1 : 0;
}

static int parse_shape(const char *s, tune_entry *e)
{
	long long m, n, k, b;
	char impl[16];
	int used = 0;

	if (sscanf(s, "%d %d %lld %lld %lld %lld %15s %d %d %d %d %d %lf %lf%n", &e->ta, &e->tb, &m, &n, &k, &b, impl,
		   &e->tile.tm, &e->tile.tn, &e->tile.vw, &e->tile.dm, &e->tile.dn, &e->default_gflops,
		   &e->tuned_gflops, &used) != 14)
		return -1;
	if (s[used] != 0 || (e->ta != 0 && e->ta != 1) || (e->tb != 0 && e->tb != 1) || m < 1 || n < 1 || k < 1 ||
	    b < 1 || !clg_cl_gemm_tile_valid(&e->tile))
		return -1;
	if (!strcmp(impl, "own"))
		e->impl = CLG_CL_GEMM_OWN;
	else if (!strcmp(impl, "clblast"))
		e->impl = CLG_CL_GEMM_CLBLAST;
	else
		return -1;
	e->m = m, e->n = n, e->k = k, e->batch = b;
	return 0;
}

/* Parses a tune file's text into d; returns NULL or why it is rejected. */
static const char *parse_file(clg_backend *be, char *text, size_t len, tune_data *d, const dev_limits *L)
{
	strbuf want = {0};
	char *end_line, *line, *next;
	unsigned long long sum;
	const char *why = NULL;

	memset(d, 0, sizeof(*d));
	if (memchr(text, 0, len))
		return "binary data";
	/* the last line: end <checksum of everything before it> */
	if (len < 2 || text[len - 1] != '\n')
		return "truncated (no final newline)";
	text[len - 1] = 0;
	end_line = strrchr(text, '\n');
	end_line = end_line ? end_line + 1 : text;
	if (sscanf(end_line, "end %llx", &sum) != 1)
		return "no end line";
	if (clg_hash64(CLG_HASH_SEED, text, (size_t)(end_line - text)) != (uint64_t)sum)
		return "checksum mismatch";
	end_line[0] = 0;
	header_lines(be, &want);
	if (want.oom || strncmp(text, want.p, want.n) != 0) {
		why = !strncmp(text, TUNE_FORMAT "\n", strlen(TUNE_FORMAT) + 1) ? "written for another device or driver"
									       : "not a clgrad tune file of this format";
		goto out;
	}
	for (line = text + want.n; *line; line = next) {
		char *nl = strchr(line, '\n');
		next = nl ? nl + 1 : line + strlen(line);
		if (nl)
			*nl = 0;
		if (line[0] == '#' || line[0] == 0)
			continue;
		if (!strncmp(line, "clblast Xgemm ", 14)) {
			if (parse_params(line + 14, xg_names, NX, d->xg) || !xg_legal(d->xg, L)) {
				why = "bad or illegal Xgemm parameters";
				goto out;
			}
			d->has_xg = 1;
		} else if (!strncmp(line, "clblast XgemmDirect ", 20)) {
			if (parse_params(line + 20, xd_names, ND, d->xd) || !xd_legal(d->xd, L)) {
				why = "bad or illegal XgemmDirect parameters";
				goto out;
			}
			d->has_xd = 1;
		} else if (!strncmp(line, "clblast GemmRoutine ", 20)) {
			if (parse_params(line + 20, &gr_name, 1, &d->gr) || d->gr < 1) {
				why = "bad GemmRoutine parameter";
				goto out;
			}
			d->has_gr = 1;
		} else if (!strncmp(line, "shape ", 6)) {
			if (d->ne == TUNE_MAX_ENTRIES || parse_shape(line + 6, &d->e[d->ne])) {
				why = "bad shape line";
				goto out;
			}
			d->ne++;
		} else {
			why = "unknown line";
			goto out;
		}
	}
out:
	free(want.p);
	return why;
}

static clg_status apply_clblast(clg_backend *be, const tune_data *d)
{
	clg_status st = CLG_OK;
	if (d->has_xg && (st = clblast_set(be, "Xgemm", xg_names, d->xg, NX)))
		return st;
	if (d->has_xd && (st = clblast_set(be, "XgemmDirect", xd_names, d->xd, ND)))
		return st;
	if (d->has_gr)
		st = clblast_set(be, "GemmRoutine", &gr_name, &d->gr, 1);
	return st;
}

/* Loads and applies the tune file of be's device once. Caller holds g_lock. */
static void load_once(clg_backend *be, dev_state *s)
{
	const char *e = getenv("CLGRAD_TUNE"), *why = NULL;
	char *text = NULL;
	long len;
	FILE *f = NULL;
	dev_limits L;

	if (s->tried)
		return;
	s->tried = 1;
	memset(&s->st, 0, sizeof(s->st));
	memset(&s->d, 0, sizeof(s->d));
	if (e && !strcmp(e, "0")) {
		s->st.disabled = 1;
		snprintf(s->st.note, sizeof(s->st.note), "CLGRAD_TUNE=0: stored tune results ignored");
		clg_debug("tune: %s", s->st.note);
		return;
	}
	if (clg_tune_file_path(be, s->st.path, sizeof(s->st.path))) {
		snprintf(s->st.note, sizeof(s->st.note), "no cache folder");
		clg_clear_error();
		return;
	}
	f = fopen(s->st.path, "rb");
	if (!f) {
		snprintf(s->st.note, sizeof(s->st.note), "no tune file (run `clgrad tune`)");
		clg_debug("tune: no tune file %s for '%s'", s->st.path, be->info.name);
		return;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || len > TUNE_MAX_FILE || fseek(f, 0, SEEK_SET) != 0) {
		why = "unreadable or too large";
		goto reject;
	}
	text = malloc((size_t)len + 1);
	if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
		why = "cannot read";
		goto reject;
	}
	text[len] = 0;
	limits_of(be, &L);
	why = parse_file(be, text, (size_t)len, &s->d, &L);
	if (why)
		goto reject;
	if (apply_clblast(be, &s->d)) {
		clg_debug("tune: %s: cannot apply the CLBlast parameters (%s); CLBlast keeps its defaults", s->st.path,
			  clg_last_error());
		clg_clear_error();
		s->d.has_xg = s->d.has_xd = s->d.has_gr = 0;
	}
	s->st.loaded = 1;
	s->st.nshapes = s->d.ne;
	s->st.clblast_params = s->d.has_xg || s->d.has_xd || s->d.has_gr;
	clg_debug("tune: applied %s to '%s': %d shapes, CLBlast parameters %s", s->st.path, be->info.name, s->d.ne,
		  s->st.clblast_params ? "set" : "default");
	goto out;
reject:
	memset(&s->d, 0, sizeof(s->d));
	snprintf(s->st.note, sizeof(s->st.note), "tune file ignored: %s", why);
	clg_debug("tune: ignoring %s (%s)", s->st.path, why);
out:
	free(text);
	if (f)
		fclose(f);
}

static double log2_ratio(int64_t a, int64_t b)
{
	return fabs(log2((double)a / (double)b));
}

static const tune_entry *nearest(const tune_data *d, int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t batch)
{
	const tune_entry *best = NULL;
	double bd = TUNE_NEAR;

	for (int i = 0; i < d->ne; i++) {
		const tune_entry *e = &d->e[i];
		double dist;
		if (e->ta != ta || e->tb != tb || (e->batch > 1) != (batch > 1))
			continue;
		dist = log2_ratio(e->m, M) + log2_ratio(e->n, N) + log2_ratio(e->k, K);
		if (dist <= bd) {
			bd = dist;
			best = e;
		}
	}
	return best;
}

int clg_cl_tune_lookup(clg_backend *be, int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t batch,
		       clg_cl_gemm_impl *impl, clg_cl_gemm_tile *tile)
{
	const tune_entry *e = NULL;
	dev_state *s;

	pthread_mutex_lock(&g_lock);
	s = state_of(be);
	if (s) {
		load_once(be, s);
		if (s->st.loaded)
			e = nearest(&s->d, ta, tb, M, N, K, batch);
		if (e) {
			*impl = e->impl;
			*tile = e->tile;
		}
	}
	pthread_mutex_unlock(&g_lock);
	return e != NULL;
}

static int is_opencl(clg_backend *be)
{
	return be && be->iface && be->iface->kind && !strcmp(be->iface->kind, "opencl");
}

clg_status clg_tune_state_of(clg_backend *be, clg_tune_state *out)
{
	dev_state *s;

	memset(out, 0, sizeof(*out));
	if (!is_opencl(be)) {
		snprintf(out->note, sizeof(out->note), "the reference backend has nothing to tune");
		return CLG_OK;
	}
	pthread_mutex_lock(&g_lock);
	s = state_of(be);
	if (s) {
		load_once(be, s);
		*out = s->st;
	}
	pthread_mutex_unlock(&g_lock);
	if (!s)
		return clg_fail(CLG_ERR_STATE, "tune: too many devices");
	return CLG_OK;
}

static void tile_str(const clg_cl_gemm_tile *t, char *buf, size_t len)
{
	snprintf(buf, len, "%dx%d/%d dot %dx%d", t->tm, t->tn, t->vw, t->dm, t->dn);
}

clg_status clg_tune_gemm_choice(clg_backend *be, int64_t m, int64_t n, int64_t k, int64_t batch, int ta, int tb,
				char *buf, size_t len)
{
	clg_cl_gemm_impl impl;
	clg_cl_gemm_tile t;
	const char *env = getenv("CLGRAD_GEMM");
	char ts[48];
	int tuned;

	if (!is_opencl(be)) {
		snprintf(buf, len, "ref");
		return CLG_OK;
	}
	tuned = clg_cl_tune_lookup(be, ta, tb, m, n, k, batch, &impl, &t);
	if (!tuned) {
		impl = be->info.type == CLG_DEV_CPU ? CLG_CL_GEMM_OWN : CLG_CL_GEMM_CLBLAST;
		clg_cl_gemm_default_tile(be, CLG_F32, &t);
	}
	if (env && !strcmp(env, "own"))
		impl = CLG_CL_GEMM_OWN;
	else if (env && !strcmp(env, "clblast"))
		impl = CLG_CL_GEMM_CLBLAST;
	tile_str(&t, ts, sizeof(ts));
	if (impl == CLG_CL_GEMM_OWN)
		snprintf(buf, len, "own %s (%s)", ts, tuned ? "tuned" : "default");
	else
		snprintf(buf, len, "clblast (%s)", tuned ? "tuned" : "default");
	return CLG_OK;
}

/* ---- the search ----------------------------------------------------------------------------------- */

typedef struct {
	clg_tune_shape *r;              /* the report's row */
	clg_buffer *a, *b, *c;
	float *ha, *hb, *ref;           /* host copies of A, B; the checked result */
	size_t na, nb, nc;
	clg_op_call call;
	int usable;                     /* the reference result exists */
	int dot;                        /* the own kernels run gemm_dot (only B transposed) */
	double t_default;               /* seconds, untuned (the device's default implementation) */
	double t_own_def, t_own;        /* own kernels: default tile, best tile */
	double t_cb_default, t_cb;      /* CLBlast: default parameters, the kept tuned ones */
	double t_ind, t_dir;            /* best Xgemm (indirect) and XgemmDirect times during the search */
	double t_ind_cand, t_dir_cand;  /* this candidate's */
	clg_cl_gemm_tile own_tile;
} tshape;

typedef struct {
	clg_backend *be;
	const clg_tune_options *o;
	clg_tune_report *r;
	tshape s[CLG_TUNE_MAX_SHAPES];
	int n;
	double t0, budget;
	clg_cl_gemm_tile def_tile;
	dev_limits L;
	unsigned rng;
} tuner;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double elapsed(const tuner *t)
{
	return now_s() - t->t0;
}

static void say(tuner *t, const char *fmt, ...) CLG_PRINTF(2, 3);
static void say(tuner *t, const char *fmt, ...)
{
	char line[512];
	int p;
	va_list ap;

	if (!t->o->progress)
		return;
	p = snprintf(line, sizeof(line), "[%6.1fs] ", elapsed(t));
	va_start(ap, fmt);
	vsnprintf(line + p, sizeof(line) - (size_t)p, fmt, ap);
	va_end(ap);
	t->o->progress(t->o->user, line);
}

static unsigned rnd(tuner *t, unsigned n)
{
	t->rng = t->rng * 1664525u + 1013904223u;
	return (t->rng >> 8) % n;
}

static double gflops_of(const clg_tune_shape *s, double secs)
{
	return secs > 0 ? 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)s->batch / secs * 1e-9 : 0.0;
}

static int add_shape(tuner *t, const char *label, int64_t m, int64_t n, int64_t k, int64_t batch, int ta, int tb,
		     int shared_a, int cols_b)
{
	clg_tune_shape *r;
	if (t->n == CLG_TUNE_MAX_SHAPES)
		return -1;
	r = &t->r->shape[t->n];
	memset(r, 0, sizeof(*r));
	snprintf(r->label, sizeof(r->label), "%s", label);
	r->m = m, r->n = n, r->k = k, r->batch = batch, r->ta = ta, r->tb = tb;
	r->shared_a = shared_a && batch > 1;
	r->cols_b = cols_b && batch > 1 && !tb;
	t->s[t->n].r = r;
	t->n++;
	return 0;
}

/* The products one training step of the MLP (784-512-512-10) and the CNN (conv 32, conv 64, fc
 * 128, fc 10) makes at batch 128, in the layouts training uses (linear layers keep W as
 * (out, in): forward x @ W^T, dx = g @ W, dW = g^T @ x; convolutions multiply shared weights by
 * im2col's columns), and square shapes. */
static void shape_set(tuner *t, clg_tune_shapes which)
{
	if (which == CLG_TUNE_SHAPES_SMALL) {
		add_shape(t, "small", 64, 64, 64, 1, 0, 0, 0, 0);
		add_shape(t, "small Bt", 100, 70, 50, 1, 0, 1, 0, 0);
		add_shape(t, "small At", 64, 48, 80, 1, 1, 0, 0, 0);
		add_shape(t, "small batch A0 Bc", 16, 40, 9, 4, 0, 0, 1, 1);
		return;
	}
	if (which & CLG_TUNE_SHAPES_TRAINING) {
		add_shape(t, "mlp fc1 forward", 128, 512, 784, 1, 0, 1, 0, 0);
		add_shape(t, "mlp fc1 dx", 128, 784, 512, 1, 0, 0, 0, 0);
		add_shape(t, "mlp fc1 dW", 512, 784, 128, 1, 1, 0, 0, 0);
		add_shape(t, "mlp fc2 forward", 128, 512, 512, 1, 0, 1, 0, 0);
		add_shape(t, "mlp fc2 dx", 128, 512, 512, 1, 0, 0, 0, 0);
		add_shape(t, "mlp fc2 dW", 512, 512, 128, 1, 1, 0, 0, 0);
		add_shape(t, "mlp fc3 forward", 128, 10, 512, 1, 0, 1, 0, 0);
		add_shape(t, "mlp fc3 dx", 128, 512, 10, 1, 0, 0, 0, 0);
		add_shape(t, "mlp fc3 dW", 10, 512, 128, 1, 1, 0, 0, 0);
		add_shape(t, "cnn conv1 forward", 32, 784, 9, 128, 0, 0, 1, 1);
		add_shape(t, "cnn conv1 dW", 32, 9, 100352, 1, 0, 1, 0, 0);
		add_shape(t, "cnn conv2 forward", 64, 196, 288, 128, 0, 0, 1, 1);
		add_shape(t, "cnn conv2 dW", 64, 288, 25088, 1, 0, 1, 0, 0);
		add_shape(t, "cnn conv2 dcols", 288, 196, 64, 128, 1, 0, 1, 1);
		add_shape(t, "cnn fc1 forward", 128, 128, 3136, 1, 0, 1, 0, 0);
		add_shape(t, "cnn fc1 dx", 128, 3136, 128, 1, 0, 0, 0, 0);
		add_shape(t, "cnn fc1 dW", 128, 3136, 128, 1, 1, 0, 0, 0);
	}
	if (which & CLG_TUNE_SHAPES_SQUARE) {
		add_shape(t, "square", 256, 256, 256, 1, 0, 0, 0, 0);
		add_shape(t, "square", 512, 512, 512, 1, 0, 0, 0, 0);
		add_shape(t, "square", 1024, 1024, 1024, 1, 0, 0, 0, 0);
	}
}

static void fill_random(float *x, size_t n, uint32_t seed)
{
	uint32_t st = seed * 2654435761u + 12345u;
	for (size_t i = 0; i < n; i++) {
		st = st * 1664525u + 1013904223u;
		x[i] = (float)((st >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
	}
}

void clg_gemm_operand_view(clg_view *v, clg_buffer *buf, int64_t batch, int64_t rows, int64_t cols, int trans,
			   int64_t batch_stride, int64_t ld)
{
	int o;
	memset(v, 0, sizeof(*v));
	v->buf = buf;
	v->dtype = CLG_F32;
	v->ndim = batch > 1 ? 3 : 2;
	o = v->ndim - 2;
	v->shape[o] = rows, v->shape[o + 1] = cols;
	v->stride[o] = trans ? 1 : ld > 0 ? ld : cols, v->stride[o + 1] = trans ? rows : 1;
	if (o) {
		v->shape[0] = batch;
		v->stride[0] = batch_stride;
	}
}

/* A(b, i, kk) and B(b, kk, j) of a shape, from the host copies. */
static float elem_a(const tshape *x, int64_t b, int64_t i, int64_t kk)
{
	const clg_tune_shape *s = x->r;
	int64_t base = s->shared_a ? 0 : b * s->m * s->k;
	return x->ha[base + (s->ta ? kk * s->m + i : i * s->k + kk)];
}

static float elem_b(const tshape *x, int64_t b, int64_t kk, int64_t j)
{
	const clg_tune_shape *s = x->r;
	if (s->tb)
		return x->hb[b * s->n * s->k + j * s->k + kk];
	if (s->cols_b)
		return x->hb[kk * s->batch * s->n + b * s->n + j];
	return x->hb[b * s->k * s->n + kk * s->n + j];
}

static clg_status shape_setup(tuner *t, tshape *x)
{
	const clg_tune_shape *s = x->r;
	clg_backend *be = t->be;
	clg_status st;

	x->na = (size_t)(s->m * s->k * (s->shared_a ? 1 : s->batch));
	x->nb = (size_t)(s->k * s->n * s->batch);
	x->nc = (size_t)(s->m * s->n * s->batch);
	x->ha = malloc(x->na * sizeof(float));
	x->hb = malloc(x->nb * sizeof(float));
	x->ref = malloc(x->nc * sizeof(float));
	if (!x->ha || !x->hb || !x->ref)
		return clg_fail(CLG_ERR_OOM, "tune: out of host memory");
	fill_random(x->ha, x->na, 1);
	fill_random(x->hb, x->nb, 2);
	if ((st = clg_buffer_alloc(be, x->na * sizeof(float), &x->a)) ||
	    (st = clg_buffer_alloc(be, x->nb * sizeof(float), &x->b)) ||
	    (st = clg_buffer_alloc(be, x->nc * sizeof(float), &x->c)) ||
	    (st = clg_buffer_upload(x->a, 0, x->ha, x->na * sizeof(float))) ||
	    (st = clg_buffer_upload(x->b, 0, x->hb, x->nb * sizeof(float))) || (st = clg_synchronize(be)))
		return st;
	memset(&x->call, 0, sizeof(x->call));
	x->call.op = CLG_OP_GEMM;
	clg_gemm_operand_view(&x->call.src[0], x->a, s->batch, s->m, s->k, s->ta, s->shared_a ? 0 : s->m * s->k, 0);
	clg_gemm_operand_view(&x->call.src[1], x->b, s->batch, s->k, s->n, s->tb, s->cols_b ? s->n : s->k * s->n,
		     s->cols_b ? s->n * s->batch : 0);
	clg_gemm_operand_view(&x->call.dst, x->c, s->batch, s->m, s->n, 0, s->m * s->n, 0);
	x->call.f[0] = 1.0;
	x->call.f[1] = 0.0;
	x->dot = s->tb && !s->ta;
	return CLG_OK;
}

static void shape_release(tshape *x)
{
	clg_buffer_free(x->a);
	clg_buffer_free(x->b);
	clg_buffer_free(x->c);
	free(x->ha);
	free(x->hb);
	free(x->ref);
	x->a = x->b = x->c = NULL;
	x->ha = x->hb = x->ref = NULL;
}

/* Checks c at a sample of entries (corners and pseudo-random ones) against a float64 host
 * product: |c - exact| <= 1e-4 * sum_k |a b| + 1e-30. */
static int host_check(tuner *t, const tshape *x, const float *c)
{
	const clg_tune_shape *s = x->r;
	for (int q = 0; q < 96; q++) {
		int64_t b, i, j;
		double exact = 0, mag = 0;
		if (q < 4) {
			b = q & 1 ? s->batch - 1 : 0;
			i = q & 1 ? s->m - 1 : 0;
			j = q & 2 ? s->n - 1 : 0;
		} else {
			b = rnd(t, (unsigned)s->batch);
			i = rnd(t, (unsigned)s->m);
			j = rnd(t, (unsigned)s->n);
		}
		for (int64_t kk = 0; kk < s->k; kk++) {
			double p = (double)elem_a(x, b, i, kk) * (double)elem_b(x, b, kk, j);
			exact += p;
			mag += fabs(p);
		}
		if (!(fabs((double)c[(b * s->m + i) * s->n + j] - exact) <= 1e-4 * mag + 1e-30))
			return 0;
	}
	return 1;
}

/* max |c - ref| / max |ref| <= 1e-4 (NaN fails). */
static int matches_ref(const tshape *x, const float *c)
{
	double maxref = 0, maxdiff = 0;
	for (size_t i = 0; i < x->nc; i++) {
		double d = fabs((double)c[i] - (double)x->ref[i]), a = fabs((double)x->ref[i]);
		if (!(d <= maxdiff))
			maxdiff = d == d ? d : INFINITY;
		if (a > maxref)
			maxref = a;
	}
	return maxdiff <= 1e-4 * maxref;
}

static clg_status poison_c(tuner *t, tshape *x)
{
	clg_op_call f = {.op = CLG_OP_FILL, .dst = x->call.dst, .f = {NAN}};
	return clg_run(t->be, &f);
}

/* Times one configuration on one shape: a warm-up (which builds kernels), then repetitions for
 * about 0.3 s (3 to 15), median. When the first timed run is over abort_over seconds (> 0),
 * stops there. Checks the result against the reference (or, for the reference itself, on the
 * host). *secs = 0 when the run failed or was wrong (and says why). */
static void measure(tuner *t, tshape *x, clg_cl_gemm_impl impl, const clg_cl_gemm_tile *tile, double abort_over,
		    double *secs, const char **why)
{
	double times[15], t1;
	int reps = 1;
	float *c = NULL;
	clg_status st;

	*secs = 0;
	*why = NULL;
	if ((st = poison_c(t, x)) || (st = clg_cl_gemm_forced(t->be, &x->call, impl, tile)) ||
	    (st = clg_synchronize(t->be)))
		goto failed;
	t1 = now_s();
	if ((st = clg_cl_gemm_forced(t->be, &x->call, impl, tile)) || (st = clg_synchronize(t->be)))
		goto failed;
	times[0] = now_s() - t1;
	if (!(abort_over > 0 && times[0] > abort_over)) {
		int want = times[0] > 0 ? (int)(0.3 / times[0]) : 15;
		want = want < 3 ? 3 : want > 15 ? 15 : want;
		for (; reps < want; reps++) {
			t1 = now_s();
			if ((st = clg_cl_gemm_forced(t->be, &x->call, impl, tile)) || (st = clg_synchronize(t->be)))
				goto failed;
			times[reps] = now_s() - t1;
		}
	}
	for (int i = 1; i < reps; i++) /* insertion sort for the median */
		for (int j = i; j > 0 && times[j] < times[j - 1]; j--) {
			double tmp = times[j];
			times[j] = times[j - 1];
			times[j - 1] = tmp;
		}
	c = malloc(x->nc * sizeof(float));
	if (!c) {
		*why = "out of host memory";
		return;
	}
	if ((st = clg_buffer_download(x->c, 0, c, x->nc * sizeof(float))))
		goto failed;
	if (x->usable ? !matches_ref(x, c) : !host_check(t, x, c)) {
		*why = "wrong result";
		goto out;
	}
	if (!x->usable) {
		memcpy(x->ref, c, x->nc * sizeof(float));
		x->usable = 1;
	}
	*secs = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
	goto out;
failed:
	*why = clg_last_error();
out:
	free(c);
}

/* Seconds one own-tile candidate takes: a build of the gemm program, then per shape a warm-up
 * and about 0.3 s of repetitions. */
static double own_time_est(const tuner *t)
{
	double s = 2.0;
	for (int i = 0; i < t->n; i++)
		if (t->s[i].usable)
			s += 0.3 + 2 * t->s[i].t_own_def;
	return s;
}

/* ---- own tiles ---- */

/* Tile candidates near the default: gemm_op (tm, tn = nv * vw) and gemm_dot (dm, dn), ordered by
 * distance from the default, within the vector register file (16 registers, 32 with 16-wide
 * vectors: accumulators + one row of V + a broadcast). */
static int own_candidates(const tuner *t, clg_cl_gemm_tile *out, int max)
{
	const clg_cl_gemm_tile *d = &t->def_tile;
	int regs = d->vw >= 16 ? 32 : 16, n = 0, nv0 = d->tn / d->vw;

	for (int dist = 1; dist <= 8 && n < max; dist++) {
		for (int nv = 1; nv <= 4; nv++)
			for (int tm = 1; tm <= 12; tm++) {
				int acc = tm * nv;
				if (abs(tm - d->tm) + abs(nv - nv0) != dist || acc < 4 || acc + nv + 1 > regs || n >= max)
					continue;
				out[n] = *d;
				out[n].tm = tm;
				out[n].tn = nv * d->vw;
				n++;
			}
		for (int dm = 1; dm <= 8; dm++)
			for (int dn = 1; dn <= 8; dn++) {
				int acc = dm * dn;
				if (abs(dm - d->dm) + abs(dn - d->dn) != dist || acc < 4 || acc + dm + dn > regs || n >= max)
					continue;
				out[n] = *d;
				out[n].dm = dm;
				out[n].dn = dn;
				n++;
			}
	}
	return n;
}

static void search_own(tuner *t, double until)
{
	clg_cl_gemm_tile cand[64];
	int nc = own_candidates(t, cand, 64);
	double times[CLG_TUNE_MAX_SHAPES];
	char ts[48];

	for (int ci = 0; ci < nc; ci++) {
		int dot_tile = cand[ci].dm != t->def_tile.dm || cand[ci].dn != t->def_tile.dn;
		double gsum = 0, t_start = elapsed(t);
		int ng = 0, bad = 0;
		const char *why = NULL;

		for (int i = 0; i < t->n; i++)
			ng += t->s[i].usable && t->s[i].dot == dot_tile;
		if (!ng)
			continue; /* no shape runs the kernel this candidate changes */
		ng = 0;
		if (elapsed(t) + own_time_est(t) > until)
			break;
		for (int i = 0; i < t->n && !bad; i++) {
			tshape *x = &t->s[i];
			times[i] = 0;
			if (!x->usable || x->dot != dot_tile)
				continue;
			measure(t, x, CLG_CL_GEMM_OWN, &cand[ci], 3 * x->t_own, &times[i], &why);
			bad = !times[i];
			if (!bad) {
				gsum += log(x->t_own_def / times[i]);
				ng++;
			}
		}
		t->r->candidates++;
		tile_str(&cand[ci], ts, sizeof(ts));
		if (bad) {
			t->r->rejected++;
			say(t, "own %s: rejected (%s)", ts, why ? why : "failed");
			continue;
		}
		for (int i = 0; i < t->n; i++) {
			tshape *x = &t->s[i];
			if (times[i] > 0 && times[i] < x->t_own) {
				x->t_own = times[i];
				x->own_tile = cand[ci];
			}
		}
		say(t, "own %s (%s): %.2fx the default tile over %d shapes (%.1f s)", ts, dot_tile ? "gemm_dot" : "gemm_op",
		    ng ? exp(gsum / ng) : 0.0, ng, elapsed(t) - t_start);
	}
}

static const char *shape_name(const clg_tune_shape *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s %lldx%lldx%lld%s%s", r->label, (long long)r->m, (long long)r->n, (long long)r->k,
		 r->ta ? " At" : "", r->tb ? " Bt" : "");
	return buf;
}

/* The search's timings are noisy (shared machines): a tile that won a shape is measured again,
 * alternating with the default tile, and kept only if it still wins clearly. */
static void confirm_own(tuner *t)
{
	char ts[48], sn[96];

	for (int i = 0; i < t->n; i++) {
		tshape *x = &t->s[i];
		double td = INFINITY, tc = INFINITY, secs;
		const char *why;
		if (!x->usable || !memcmp(&x->own_tile, &t->def_tile, sizeof(t->def_tile)))
			continue;
		for (int round = 0; round < 3; round++) {
			measure(t, x, CLG_CL_GEMM_OWN, &t->def_tile, 0, &secs, &why);
			if (secs > 0 && secs < td)
				td = secs;
			measure(t, x, CLG_CL_GEMM_OWN, &x->own_tile, 0, &secs, &why);
			if (secs > 0 && secs < tc)
				tc = secs;
		}
		tile_str(&x->own_tile, ts, sizeof(ts));
		if (isfinite(td) && tc < TUNE_MARGIN * td) {
			x->t_own = tc;
			x->t_own_def = td;
			say(t, "%s: own %s confirmed, %.2fx the default tile", shape_name(x->r, sn, sizeof(sn)), ts,
			    td / tc);
		} else {
			say(t, "%s: own %s not confirmed (%.2fx the default tile): default kept",
			    shape_name(x->r, sn, sizeof(sn)), ts,
			    isfinite(tc) && isfinite(td) ? td / tc : 0.0);
			x->own_tile = t->def_tile;
			if (isfinite(td))
				x->t_own = x->t_own_def = td;
			else
				x->t_own = x->t_own_def;
		}
	}
}

/* ---- CLBlast ---- */

static void random_params(tuner *t, const size_t (*vals)[6], int n, size_t *p,
			  int (*legal)(const size_t *, const dev_limits *))
{
	for (int tries = 0; tries < 20000; tries++) {
		for (int i = 0; i < n; i++)
			p[i] = vals[i][rnd(t, (unsigned)nvals(vals[i]))];
		if (legal(p, &t->L))
			return;
	}
}

/* p with one parameter moved to a neighbouring value, legal; returns 0 when none was found. */
static int mutate_params(tuner *t, const size_t (*vals)[6], int n, const size_t *from, size_t *p,
			 int (*legal)(const size_t *, const dev_limits *))
{
	for (int tries = 0; tries < 500; tries++) {
		int i = (int)rnd(t, (unsigned)n), nv = nvals(vals[i]), j = 0;
		memcpy(p, from, (size_t)n * sizeof(size_t));
		if (nv < 2)
			continue;
		while (j < nv && vals[i][j] != from[i])
			j++;
		j = j == nv ? (int)rnd(t, (unsigned)nv) : rnd(t, 2) ? (j + 1) % nv : (j + nv - 1) % nv;
		p[i] = vals[i][j];
		/* a second parameter now and then, so steps can cross illegal neighbours */
		if (rnd(t, 3) == 0) {
			int i2 = (int)rnd(t, (unsigned)n);
			p[i2] = vals[i2][rnd(t, (unsigned)nvals(vals[i2]))];
		}
		if (legal(p, &t->L) && memcmp(p, from, (size_t)n * sizeof(size_t)))
			return 1;
	}
	return 0;
}

/* Measures CLBlast as currently configured on the non-batched shapes with lo_mnk <= m*n*k <=
 * hi_mnk (the search) or on all; writes
 * each shape's time to *slot (an offset into tshape). Returns the geometric mean of GFLOP/s over
 * the shapes, 0 when a result was wrong or a call failed (*why). */
static double clblast_pass(tuner *t, size_t slot, int all, double lo_mnk, double hi_mnk, double hard_stop,
			   const char **why)
{
	double gsum = 0;
	int ng = 0;

	*why = NULL;
	for (int i = 0; i < t->n; i++) {
		tshape *x = &t->s[i];
		double *dst = (double *)((char *)x + slot), best = x->t_cb ? x->t_cb : x->t_cb_default, secs;
		double mnk = (double)x->r->m * (double)x->r->n * (double)x->r->k;
		*dst = 0;
		if (!x->usable || (!all && (x->r->batch > 1 || mnk < lo_mnk || mnk > hi_mnk)))
			continue;
		if (elapsed(t) > hard_stop) {
			*why = "over the time budget";
			return 0;
		}
		measure(t, x, CLG_CL_GEMM_CLBLAST, NULL, best > 0 ? 3 * best : 0, &secs, why);
		if (!secs)
			return 0;
		*dst = secs;
		gsum += log(gflops_of(x->r, secs));
		ng++;
	}
	return ng ? exp(gsum / ng) : 0;
}

static const size_t xg_seed_cpu[NX] = {[GEMMK] = 0, [KREG] = 1, [KWG] = 32, [KWI] = 2, [MDIMA] = 8, [MDIMC] = 8,
				       [MWG] = 64,  [NDIMB] = 8, [NDIMC] = 8, [NWG] = 64, [SA] = 0,   [SB] = 0,
				       [STRM] = 0,  [STRN] = 0,  [VWM] = 8,   [VWN] = 8};
static const size_t xg_seed_gpu[NX] = {[GEMMK] = 0, [KREG] = 1, [KWG] = 16,  [KWI] = 2,  [MDIMA] = 16, [MDIMC] = 16,
				       [MWG] = 64,  [NDIMB] = 16, [NDIMC] = 16, [NWG] = 64, [SA] = 1,    [SB] = 1,
				       [STRM] = 1,  [STRN] = 1,   [VWM] = 2,    [VWN] = 2};
static const size_t xd_seed_cpu[ND] = {[KWID] = 2, [MDIMAD] = 8, [MDIMCD] = 8, [NDIMBD] = 8, [NDIMCD] = 8,
				       [PADA] = 1, [PADB] = 1,   [VWMD] = 4,   [VWND] = 4,   [WGD] = 32};
static const size_t xd_seed_gpu[ND] = {[KWID] = 2, [MDIMAD] = 16, [MDIMCD] = 16, [NDIMBD] = 16, [NDIMCD] = 16,
				       [PADA] = 1, [PADB] = 1,    [VWMD] = 2,    [VWND] = 2,    [WGD] = 32};

typedef struct {
	int direct;             /* searching XgemmDirect (else Xgemm) */
	size_t best[NX];        /* best parameters (ND used for direct) */
	double best_score;      /* geometric mean GFLOP/s */
	int have;
} cb_search;

/* One phase of the CLBlast search (Xgemm, or XgemmDirect), until the given time. */
static void search_clblast_kernel(tuner *t, cb_search *cs, double until, double *compile_est)
{
	const int n = cs->direct ? ND : NX;
	const char *const *names = cs->direct ? xd_names : xg_names;
	const size_t(*vals)[6] = cs->direct ? xd_vals : xg_vals;
	int (*legal)(const size_t *, const dev_limits *) = cs->direct ? xd_legal : xg_legal;
	const int cpu = t->be->info.type == CLG_DEV_CPU;
	const size_t *seeds[2] = {cs->direct ? (cpu ? xd_seed_cpu : xd_seed_gpu) : (cpu ? xg_seed_cpu : xg_seed_gpu),
				  cs->direct ? (cpu ? xd_seed_gpu : xd_seed_cpu) : (cpu ? xg_seed_gpu : xg_seed_cpu)};
	/* GemmRoutine: always the kernel under search (m*n*k below the cube: direct) */
	size_t route = cs->direct ? 100000 : 1;
	size_t slot = cs->direct ? offsetof(tshape, t_dir_cand) : offsetof(tshape, t_ind_cand);
	char ps[400];

	if (clblast_set(t->be, "GemmRoutine", &gr_name, &route, 1)) {
		say(t, "clblast: cannot set GemmRoutine: %s", clg_last_error());
		return;
	}
	for (int ci = 0;; ci++) {
		size_t p[NX];
		double t_start = elapsed(t), score;
		const char *why = NULL;

		if (t_start + *compile_est > until)
			break;
		if (ci < 2)
			memcpy(p, seeds[ci], (size_t)n * sizeof(size_t));
		else if (cs->have && ci % 2 == 1 && mutate_params(t, vals, n, cs->best, p, legal))
			; /* greedy: a neighbour of the best */
		else
			random_params(t, vals, n, p, legal);
		if (!legal(p, &t->L))
			continue;
		params_str(names, p, n, ps, sizeof(ps));
		t->r->candidates++;
		if (clblast_set(t->be, cs->direct ? "XgemmDirect" : "Xgemm", names, p, n)) {
			t->r->rejected++;
			say(t, "clblast %s %s: rejected (%s)", cs->direct ? "XgemmDirect" : "Xgemm", ps, clg_last_error());
			continue;
		}
		/* XgemmDirect on the shapes it may serve; Xgemm on all but tiny ones (which go direct) */
		score = cs->direct ? clblast_pass(t, slot, 0, 0, 512.0 * 512 * 512, t->budget * 1.2, &why)
				   : clblast_pass(t, slot, 0, 64.0 * 64 * 64, INFINITY, t->budget * 1.2, &why);
		if (score <= 0) {
			t->r->rejected++;
			say(t, "clblast %s %s: rejected (%s)", cs->direct ? "XgemmDirect" : "Xgemm", ps, why ? why : "failed");
			if (elapsed(t) > t->budget * 1.2)
				break;
			continue;
		}
		say(t, "clblast %s %s: %.1f GF/s geomean (%.1f s)%s", cs->direct ? "XgemmDirect" : "Xgemm", ps, score,
		    elapsed(t) - t_start, score > cs->best_score ? " best so far" : "");
		/* the first candidate's time (compile + runs) estimates the next ones' */
		*compile_est = 0.5 * *compile_est + 0.5 * (elapsed(t) - t_start);
		if (score > cs->best_score) {
			cs->best_score = score;
			memcpy(cs->best, p, (size_t)n * sizeof(size_t));
			cs->have = 1;
			for (int i = 0; i < t->n; i++) {
				tshape *x = &t->s[i];
				if (cs->direct)
					x->t_dir = x->t_dir_cand;
				else
					x->t_ind = x->t_ind_cand;
			}
		}
	}
}

/* The GemmRoutine threshold: shapes with m*n*k < T^3 run XgemmDirect. Picks T among the shapes'
 * own sizes so that the sum over shapes of (time of the path T picks / faster path) is least. */
static size_t pick_threshold(const tuner *t)
{
	size_t best_t = 1;
	double best_cost = INFINITY;

	for (int c = -1; c <= t->n; c++) {
		size_t T;
		double cost = 0;
		if (c == -1)
			T = 1;
		else if (c == t->n)
			T = 100000;
		else
			T = (size_t)ceil(cbrt((double)t->s[c].r->m * (double)t->s[c].r->n * (double)t->s[c].r->k)) + 1;
		for (int i = 0; i < t->n; i++) {
			const tshape *x = &t->s[i];
			double mnk = (double)x->r->m * (double)x->r->n * (double)x->r->k, ti, td, tb;
			if (x->r->batch > 1 || !x->usable)
				continue;
			ti = x->t_ind > 0 ? x->t_ind : INFINITY;
			td = x->t_dir > 0 ? x->t_dir : INFINITY;
			tb = fmin(ti, td);
			if (!isfinite(tb))
				continue;
			cost += (mnk < (double)T * (double)T * (double)T ? td : ti) / tb;
		}
		if (cost < best_cost) {
			best_cost = cost;
			best_t = T;
		}
	}
	return best_t;
}

/* ---- driver ---------------------------------------------------------------------------------------- */

/* Per shape: the own kernels' best tile when clearly faster than their default tile, then the
 * faster implementation, leaving the device's default implementation only for a clear gain. */
static void choose(tuner *t, tune_data *d)
{
	const int cpu = t->be->info.type == CLG_DEV_CPU;

	d->ne = 0;
	for (int i = 0; i < t->n; i++) {
		tshape *x = &t->s[i];
		clg_tune_shape *r = x->r;
		tune_entry *e;
		double t_cb = x->t_cb > 0 ? x->t_cb : x->t_cb_default, t_own = x->t_own;
		int own;

		if (!x->usable)
			continue;
		if (!(x->t_own < TUNE_MARGIN * x->t_own_def)) {
			x->own_tile = t->def_tile;
			t_own = x->t_own_def;
		}
		if (cpu)
			own = !(t_cb > 0 && t_cb < TUNE_MARGIN * t_own);
		else
			own = !(t_cb > 0) || t_own < TUNE_MARGIN * t_cb;
		r->own_gflops = gflops_of(r, t_own);
		r->clblast_default_gflops = gflops_of(r, x->t_cb_default);
		r->clblast_gflops = gflops_of(r, x->t_cb);
		r->tuned_gflops = gflops_of(r, own ? t_own : t_cb);
		snprintf(r->choice, sizeof(r->choice), "%s", own ? "own" : "clblast");
		tile_str(&x->own_tile, r->tile, sizeof(r->tile));
		/* the default configuration kept: the same thing as the default column */
		r->is_default = own == cpu && (!own || !memcmp(&x->own_tile, &t->def_tile, sizeof(t->def_tile))) &&
				(own || !x->t_cb);
		if (r->is_default)
			r->tuned_gflops = r->default_gflops;
		e = &d->e[d->ne++];
		e->ta = r->ta, e->tb = r->tb, e->m = r->m, e->n = r->n, e->k = r->k, e->batch = r->batch;
		e->impl = own ? CLG_CL_GEMM_OWN : CLG_CL_GEMM_CLBLAST;
		e->tile = x->own_tile;
		e->default_gflops = r->default_gflops;
		e->tuned_gflops = r->tuned_gflops;
		snprintf(e->label, sizeof(e->label), "%s", r->label);
	}
}

clg_status clg_tune_run(clg_backend *be, const clg_tune_options *opt, clg_tune_report *r)
{
	tuner *t = NULL;
	clg_tune_options defaults = {0};
	tune_data d;
	clg_status st = CLG_OK;
	const int cpu = be && be->info.type == CLG_DEV_CPU;
	double compile_est = 10.0; /* CLBlast: first build of its GEMM program, seconds (PoCL: ~7) */
	cb_search xs = {0}, ds = {.direct = 1};
	const char *why;
	int cb_fits;
	double search_end, final_est = 10.0;

	memset(r, 0, sizeof(*r));
	memset(&d, 0, sizeof(d));
	if (!is_opencl(be))
		return clg_fail(CLG_ERR_UNSUPPORTED, "tune: device '%s' is the reference backend: nothing to tune",
				be ? be->info.name : "(none)");
	if (!opt)
		opt = &defaults;
	t = calloc(1, sizeof(*t));
	if (!t)
		return clg_fail(CLG_ERR_OOM, "tune: out of host memory");
	t->be = be;
	t->o = opt;
	t->r = r;
	t->t0 = now_s();
	t->budget = opt->budget_s > 0 ? opt->budget_s : 60;
	t->rng = opt->seed * 2654435761u + 1u;
	limits_of(be, &t->L);
	clg_cl_gemm_default_tile(be, CLG_F32, &t->def_tile);
	if (clg_tune_file_path(be, r->path, sizeof(r->path)))
		clg_clear_error();
	shape_set(t, opt->shapes ? opt->shapes : CLG_TUNE_SHAPES_ALL);
	r->nshapes = t->n;
	say(t, "tuning GEMM on '%s' (%s), %d shapes, budget %.0f s", be->info.name, clg_device_type_name(be->info.type),
	    t->n, t->budget);

	/* 1. the reference result of each shape (own kernels, default tile, checked on the host) and
	 *    the untuned time */
	for (int i = 0; i < t->n; i++) {
		tshape *x = &t->s[i];
		double secs;
		char ts[48];
		if ((st = shape_setup(t, x)))
			goto out;
		x->own_tile = t->def_tile;
		measure(t, x, CLG_CL_GEMM_OWN, &t->def_tile, 0, &secs, &why);
		if (!secs) {
			say(t, "%s %lldx%lldx%lld: own kernels failed (%s): shape skipped", x->r->label,
			    (long long)x->r->m, (long long)x->r->n, (long long)x->r->k, why ? why : "?");
			continue;
		}
		x->t_own = x->t_own_def = secs;
		if (cpu)
			x->t_default = secs;
		tile_str(&t->def_tile, ts, sizeof(ts));
		say(t, "%-18s %5lldx%5lldx%6lld%s%s%s: own %s %.1f GF/s", x->r->label, (long long)x->r->m,
		    (long long)x->r->n, (long long)x->r->k, x->r->ta ? " At" : "", x->r->tb ? " Bt" : "",
		    x->r->batch > 1 ? " batched" : "", ts, gflops_of(x->r, secs));
	}

	/* 2. CLBlast's defaults: the untuned choice on GPUs, so always measured there */
	if (!cpu || elapsed(t) + compile_est < 0.6 * t->budget) {
		double t_start = elapsed(t);
		for (int i = 0; i < t->n; i++) {
			tshape *x = &t->s[i];
			double secs;
			if (!x->usable)
				continue;
			/* on CPUs, where the own kernels are the default, one timed run tells a much slower
			 * CLBlast (the usual case there) well enough */
			measure(t, x, CLG_CL_GEMM_CLBLAST, NULL, cpu && x->t_own > 0 ? 5 * x->t_own : 0, &secs, &why);
			x->t_cb_default = secs;
			if (!cpu)
				x->t_default = secs > 0 ? secs : x->t_own;
			if (!secs)
				say(t, "%s: CLBlast (default parameters) failed: %s", x->r->label, why ? why : "?");
		}
		compile_est = final_est = elapsed(t) - t_start;
		say(t, "clblast default parameters measured on every shape (%.1f s)", compile_est);
	} else {
		say(t, "clblast: skipped (budget too small for its kernel builds, about %.0f s each)", compile_est);
	}
	for (int i = 0; i < t->n; i++)
		t->s[i].r->default_gflops = gflops_of(t->s[i].r, t->s[i].t_default);

	/* 3. own tiles: on CPUs, where they are the default, most of the time, or all of it when
	 *    CLBlast's builds do not fit (its defaults, two kernels' candidates and a final check) */
	cb_fits = elapsed(t) + 4 * compile_est < t->budget;
	search_own(t, cb_fits ? fmin((cpu ? 0.45 : 0.15) * t->budget, t->budget - 3.2 * compile_est)
			      : 0.9 * t->budget);
	confirm_own(t);

	/* 4. CLBlast: Xgemm then XgemmDirect, then the switch between them, then all shapes */
	/* (the final check on every shape costs about what measuring the defaults did) */
	search_end = t->budget - final_est;
	if (cb_fits && elapsed(t) + 2 * compile_est < search_end) {
		double rest = search_end - elapsed(t);
		search_clblast_kernel(t, &xs, elapsed(t) + 0.6 * rest, &compile_est);
		if (xs.have && clblast_set(be, "Xgemm", xg_names, xs.best, NX) == CLG_OK)
			search_clblast_kernel(t, &ds, search_end, &compile_est);
	}
	if (xs.have && ds.have) {
		size_t T = pick_threshold(t);
		double gsum_t = 0, gsum_d = 0, score;
		int ng = 0, ok;
		ok = !clblast_set(be, "Xgemm", xg_names, xs.best, NX) && !clblast_set(be, "XgemmDirect", xd_names, ds.best, ND) &&
		     !clblast_set(be, "GemmRoutine", &gr_name, &T, 1);
		say(t, "clblast: final check of the best parameters on every shape (switch to Xgemm at %zu^3)", T);
		score = ok ? clblast_pass(t, offsetof(tshape, t_cb), 1, 0, INFINITY, INFINITY, &why) : 0;
		for (int i = 0; ok && score > 0 && i < t->n; i++) {
			tshape *x = &t->s[i];
			if (x->t_cb > 0 && x->t_cb_default > 0) {
				gsum_t += log(gflops_of(x->r, x->t_cb));
				gsum_d += log(gflops_of(x->r, x->t_cb_default));
				ng++;
			}
		}
		/* keep the parameters when they compute right everywhere and beat the defaults overall
		 * (or the defaults were never measured) */
		if (ok && score > 0 && (ng == 0 || gsum_t > gsum_d)) {
			d.has_xg = d.has_xd = d.has_gr = 1;
			memcpy(d.xg, xs.best, sizeof(d.xg));
			memcpy(d.xd, ds.best, ND * sizeof(size_t));
			d.gr = T;
			r->clblast_tuned = 1;
			r->min_indirect = (unsigned long)T;
			params_str(xg_names, xs.best, NX, r->clblast_xgemm, sizeof(r->clblast_xgemm));
			params_str(xd_names, ds.best, ND, r->clblast_direct, sizeof(r->clblast_direct));
			say(t, "clblast: tuned parameters kept (%.2fx the defaults, geomean over %d shapes)",
			    ng ? exp((gsum_t - gsum_d) / ng) : 0.0, ng);
		} else {
			say(t, "clblast: tuned parameters not kept (%s)",
			    !ok || score <= 0 ? (why ? why : "failed") : "no faster than the defaults");
			for (int i = 0; i < t->n; i++)
				t->s[i].t_cb = 0;
		}
	}
	if (!r->clblast_tuned)
		d.has_xg = d.has_xd = d.has_gr = 0;
	choose(t, &d);
	r->elapsed_s = elapsed(t);
	if (!opt->dry_run) {
		if (!r->path[0]) {
			st = clg_fail(CLG_ERR_IO, "tune: no cache folder to store the result in (CLGRAD_CACHE_DIR=0?)");
			goto out;
		}
		if ((st = store_file(be, r->path, &d)))
			goto out;
		r->stored = 1;
		/* this process uses the result from now on */
		pthread_mutex_lock(&g_lock);
		{
			dev_state *s = state_of(be);
			if (s) {
				s->tried = 1;
				s->d = d;
				memset(&s->st, 0, sizeof(s->st));
				s->st.loaded = 1;
				s->st.nshapes = d.ne;
				s->st.clblast_params = d.has_xg;
				snprintf(s->st.path, sizeof(s->st.path), "%s", r->path);
			}
		}
		pthread_mutex_unlock(&g_lock);
	}
out:
	for (int i = 0; i < t->n; i++)
		shape_release(&t->s[i]);
	free(t);
	return st;
}
