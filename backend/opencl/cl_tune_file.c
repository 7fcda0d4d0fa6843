/* GEMM tuning (backend/clg_tune.h): the tune file (format, atomic store, checked load), applying
 * it (CLBlast parameters, per-shape implementation and tile for cl_gemm.c), and the search.
 *
 * Tune file, one record a line (text, so a person can read what was chosen):
 *   clgrad-tune 1
 *   platform <name>            platform_version <v>        device <name>      driver <v>
 *   clblast Xgemm GEMMK=0 KREG=1 ...   (all 16 parameters; likewise XgemmDirect's 10, GemmRoutine's 1)
 *   shape <ta> <tb> <m> <n> <k> <batch> <own|clblast> <tm> <tn> <vw> <dm> <dn> <default GF/s> <tuned GF/s>
 *   kshape <family> <cpu|gpu> <us cpu shape> <us gpu shape>   (the faster kernel shape of a family,
 *          applied at device open through clg_backend_set_kernel_shape; older readers ignore the file)
 *   fftconv <min kernel size, 0: never> <largest size measured> <us fft> <us im2col>   (conv1d's
 *          FFT crossover, clg_tune_store_fft_conv; older readers ignore the file)
 *   gemmwg <work-items> <ms at 1> <ms at that>   (the own CPU GEMM's gemm_op work-group width along
 *          its columns, measured over the tuned shapes; applied at device open; older readers
 *          ignore the file)
 *   owndefault <tm> <tn> <vw> <dm> <dn>   (the own GEMM's untuned tile when the shapes were measured:
 *          a clgrad whose untuned tile differs ignores the shape lines, whose choices were made
 *          against that tile, and keeps the rest; older readers ignore the file)
 *   # comments
 *   end <FNV-1a 64 of every byte before this line, hex>
 * A file whose header names another platform, device or driver, whose checksum does not match,
 * or with any line that does not parse, is ignored as a whole. */
#include "cl_tune_internal.h"

#include <clblast_c.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TUNE_FORMAT "clgrad-tune 1"
#define TUNE_MAX_FILE 65536
#define TUNE_MAX_DEVICES 16
/* a stored shape applies to a call of the same layout within this distance (sum over m, n, k of
 * |log2 ratio|): 2 allows, say, m and n each half or double */
#define TUNE_NEAR 2.0

/* ---- CLBlast parameters ---------------------------------------------------------------------- */

const char *const clg_cl_tune_xg_names[NX] = {"GEMMK", "KREG", "KWG",  "KWI", "MDIMA", "MDIMC", "MWG",  "NDIMB",
						     "NDIMC", "NWG",  "SA",   "SB",  "STRM",  "STRN",  "VWM",  "VWN"};
const char *const clg_cl_tune_xd_names[ND] = {"KWID", "MDIMAD", "MDIMCD", "NDIMBD", "NDIMCD",
						     "PADA", "PADB",   "VWMD",   "VWND",   "WGD"};
const char *const clg_cl_tune_gr_name = "XGEMM_MIN_INDIRECT_SIZE";

static int mult(size_t x, size_t d)
{
	return d && x % d == 0;
}

/* The legality rules of CLBlast 1.5's Xgemm (as its tuner states them), plus the device's limits. */
int clg_cl_tune_xg_legal(const size_t *p, const dev_limits *L)
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

int clg_cl_tune_xd_legal(const size_t *p, const dev_limits *L)
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

void clg_cl_tune_limits_of(clg_backend *be, dev_limits *L)
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

void clg_cl_tune_params_str(const char *const *names, const size_t *v, int n, char *buf, size_t len)
{
	size_t p = 0;
	buf[0] = 0;
	for (int i = 0; i < n && p < len; i++)
		p += (size_t)snprintf(buf + p, len - p, "%s%s=%zu", i ? " " : "", names[i], v[i]);
}

clg_status clg_cl_tune_clblast_set(clg_backend *be, const char *kernel, const char *const *names, const size_t *v,
				   int n)
{
	CLBlastStatusCode s = CLBlastOverrideParameters(clg_cl_of(be)->device, kernel, CLBlastPrecisionSingle,
							(size_t)n, (const char **)names, v);
	if (s != CLBlastSuccess)
		return clg_cl_fail(be, "tune", (cl_int)s, "CLBlastOverrideParameters(%s)", kernel);
	return CLG_OK;
}

/* ---- per-device state: what the tune file said ----------------------------------------------- */

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
clg_status clg_cl_tune_store_file(clg_backend *be, const char *path, const tune_data *d)
{
	strbuf b = {0};
	char err[2400], dir[1024], pbuf[400];
	clg_status st = CLG_OK;
	char *slash;

	header_lines(be, &b);
	if (d->has_xg) {
		clg_cl_tune_params_str(clg_cl_tune_xg_names, d->xg, NX, pbuf, sizeof(pbuf));
		sb_printf(&b, "clblast Xgemm %s\n", pbuf);
	}
	if (d->has_xd) {
		clg_cl_tune_params_str(clg_cl_tune_xd_names, d->xd, ND, pbuf, sizeof(pbuf));
		sb_printf(&b, "clblast XgemmDirect %s\n", pbuf);
	}
	if (d->has_gr)
		sb_printf(&b, "clblast GemmRoutine %s=%zu\n", clg_cl_tune_gr_name, d->gr);
	{
		clg_cl_gemm_tile t;
		clg_cl_gemm_default_tile(be, CLG_F32, &t);
		sb_printf(&b, "owndefault %d %d %d %d %d\n", t.tm, t.tn, t.vw, t.dm, t.dn);
	}
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
	for (int f = 0; f < CLG_KFAM_COUNT; f++)
		if (d->ks[f].has)
			sb_printf(&b, "kshape %s %s %.1f %.1f\n", clg_kernel_family_name((clg_kernel_family)f),
				  clg_kernel_shape_name(d->ks[f].shape), d->ks[f].us_cpu, d->ks[f].us_gpu);
	if (d->gemm_wg > 0)
		sb_printf(&b, "gemmwg %d %.3f %.3f\n", d->gemm_wg, d->gemm_wg_ms[0], d->gemm_wg_ms[1]);
	if (d->has_fftconv)
		sb_printf(&b, "fftconv %d %d %.1f %.1f\n", d->fftconv.min_k, d->fftconv.k_max, d->fftconv.us_fft,
			  d->fftconv.us_im2col);
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
	if (b.oom) /* the end line */
		st = clg_fail(CLG_ERR_OOM, "tune: out of host memory writing %s", path);
	else if (clg_cl_write_atomic(path, b.p, b.n, NULL, 0, err, sizeof(err)) != 0)
		st = clg_fail(CLG_ERR_IO, "tune: %s", err);
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

/* "<family> <cpu|gpu> <us_cpu> <us_gpu>" into d->ks[family]. */
static int parse_kshape(const char *s, tune_data *d)
{
	char fam[16], shape[8];
	double uc, ug;
	int used = 0, f;

	if (sscanf(s, "%15s %7s %lf %lf%n", fam, shape, &uc, &ug, &used) != 4 || s[used] != 0 || !(uc > 0) ||
	    !(ug > 0) || (strcmp(shape, "cpu") && strcmp(shape, "gpu")))
		return -1;
	for (f = 0; f < CLG_KFAM_COUNT; f++)
		if (!strcmp(fam, clg_kernel_family_name((clg_kernel_family)f)))
			break;
	if (f == CLG_KFAM_COUNT)
		return -1;
	d->ks[f].has = 1;
	d->ks[f].shape = !strcmp(shape, "gpu") ? CLG_SHAPE_GPU : CLG_SHAPE_CPU;
	d->ks[f].us_cpu = uc;
	d->ks[f].us_gpu = ug;
	return 0;
}

/* Parses a tune file's text into d; returns NULL or why it is rejected. */
const char *clg_cl_tune_parse(clg_backend *be, char *text, size_t len, tune_data *d, const dev_limits *L)
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
			if (parse_params(line + 14, clg_cl_tune_xg_names, NX, d->xg) || !clg_cl_tune_xg_legal(d->xg, L)) {
				why = "bad or illegal Xgemm parameters";
				goto out;
			}
			d->has_xg = 1;
		} else if (!strncmp(line, "clblast XgemmDirect ", 20)) {
			if (parse_params(line + 20, clg_cl_tune_xd_names, ND, d->xd) || !clg_cl_tune_xd_legal(d->xd, L)) {
				why = "bad or illegal XgemmDirect parameters";
				goto out;
			}
			d->has_xd = 1;
		} else if (!strncmp(line, "clblast GemmRoutine ", 20)) {
			if (parse_params(line + 20, &clg_cl_tune_gr_name, 1, &d->gr) || d->gr < 1) {
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
		} else if (!strncmp(line, "owndefault ", 11)) {
			clg_cl_gemm_tile *t = &d->owndef;
			int used = 0;
			if (sscanf(line + 11, "%d %d %d %d %d%n", &t->tm, &t->tn, &t->vw, &t->dm, &t->dn, &used) != 5 ||
			    line[11 + used] != 0 || !clg_cl_gemm_tile_valid(t)) {
				why = "bad owndefault line";
				goto out;
			}
			d->has_owndef = 1;
		} else if (!strncmp(line, "fftconv ", 8)) {
			clg_tune_fft_conv *c = &d->fftconv;
			int used = 0;
			if (sscanf(line + 8, "%d %d %lf %lf%n", &c->min_k, &c->k_max, &c->us_fft, &c->us_im2col, &used) != 4 ||
			    line[8 + used] != 0 || c->min_k < 0 || c->k_max < 1 || !(c->us_fft > 0) || !(c->us_im2col > 0)) {
				why = "bad fftconv line";
				goto out;
			}
			d->has_fftconv = 1;
		} else if (!strncmp(line, "gemmwg ", 7)) {
			int used = 0;
			if (sscanf(line + 7, "%d %lf %lf%n", &d->gemm_wg, &d->gemm_wg_ms[0], &d->gemm_wg_ms[1], &used) != 3 ||
			    line[7 + used] != 0 || d->gemm_wg < 1 || d->gemm_wg > 256 || !(d->gemm_wg_ms[0] > 0) ||
			    !(d->gemm_wg_ms[1] > 0)) {
				why = "bad gemmwg line";
				goto out;
			}
		} else if (!strncmp(line, "kshape ", 7)) {
			if (parse_kshape(line + 7, d)) {
				why = "bad kshape line";
				goto out;
			}
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
	if (d->has_xg && (st = clg_cl_tune_clblast_set(be, "Xgemm", clg_cl_tune_xg_names, d->xg, NX)))
		return st;
	if (d->has_xd && (st = clg_cl_tune_clblast_set(be, "XgemmDirect", clg_cl_tune_xd_names, d->xd, ND)))
		return st;
	if (d->has_gr)
		st = clg_cl_tune_clblast_set(be, "GemmRoutine", &clg_cl_tune_gr_name, &d->gr, 1);
	return st;
}

/* Drops the shape lines of a file measured against another untuned own tile than this build's
 * (an older clgrad's, or one written before the file said): a shape's own-or-CLBlast choice and its
 * tile were searched around that tile, so the current default may now beat them. */
static void stale_shapes(clg_backend *be, dev_state *s)
{
	clg_cl_gemm_tile t;

	if (!s->d.ne)
		return;
	clg_cl_gemm_default_tile(be, CLG_F32, &t);
	if (s->d.has_owndef && !memcmp(&s->d.owndef, &t, sizeof(t)))
		return;
	snprintf(s->st.note, sizeof(s->st.note),
		 "%d GEMM shapes ignored: measured against another default tile than this clgrad's (%dx%d/%d, "
		 "dot %dx%d); run `clgrad tune` again",
		 s->d.ne, t.tm, t.tn, t.vw, t.dm, t.dn);
	clg_debug("tune: %s: %s", s->st.path, s->st.note);
	s->d.ne = 0;
}

/* Loads and applies the tune file of be's device once. Caller holds g_lock. */
static void load_once(clg_backend *be, dev_state *s)
{
	const char *why = NULL;
	char *text = NULL;
	long len;
	FILE *f = NULL;
	dev_limits L;

	if (s->tried)
		return;
	s->tried = 1;
	memset(&s->st, 0, sizeof(s->st));
	memset(&s->d, 0, sizeof(s->d));
	if (!clg_cfg_bool(CLG_CFG_TUNE)) {
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
	f = clg_fopen_read(s->st.path, "rb");
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
	clg_cl_tune_limits_of(be, &L);
	why = clg_cl_tune_parse(be, text, (size_t)len, &s->d, &L);
	if (why)
		goto reject;
	stale_shapes(be, s);
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

int clg_cl_tune_current(clg_backend *be, tune_data *out)
{
	dev_state *s;
	int loaded = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&g_lock);
	s = state_of(be);
	if (s) {
		load_once(be, s);
		loaded = s->st.loaded;
		if (loaded)
			*out = s->d;
	}
	pthread_mutex_unlock(&g_lock);
	return loaded;
}

/* Caller holds g_lock. The kernel shapes, and gemm_op's work-group width (cl_gemm.c). */
static void apply_shapes_of(clg_backend *be, const tune_data *d)
{
	clg_cl_of(be)->gemm_wg = d->gemm_wg;
	if (d->gemm_wg > 0)
		clg_debug("tune: gemm_op work-groups of %d work-items (measured: %.3f ms at 1, %.3f at %d)", d->gemm_wg,
			  d->gemm_wg_ms[0], d->gemm_wg_ms[1], d->gemm_wg);
	for (int f = 0; f < CLG_KFAM_COUNT; f++) {
		const tune_kshape *k = &d->ks[f];
		char why[128];
		if (!k->has)
			continue;
		snprintf(why, sizeof(why), "measured by clgrad tune: %s %.0f us vs %s %.0f us",
			 clg_kernel_shape_name(k->shape), k->shape == CLG_SHAPE_GPU ? k->us_gpu : k->us_cpu,
			 clg_kernel_shape_name(k->shape == CLG_SHAPE_GPU ? CLG_SHAPE_CPU : CLG_SHAPE_GPU),
			 k->shape == CLG_SHAPE_GPU ? k->us_cpu : k->us_gpu);
		clg_backend_set_kernel_shape(be, (clg_kernel_family)f, k->shape, why);
	}
}

/* From now on this process uses d (just stored at path) for be's device. */
void clg_cl_tune_use(clg_backend *be, const tune_data *d, const char *path)
{
	pthread_mutex_lock(&g_lock);
	{
		dev_state *s = state_of(be);
		if (s) {
			s->tried = 1;
			s->d = *d;
			memset(&s->st, 0, sizeof(s->st));
			s->st.loaded = 1;
			s->st.nshapes = d->ne;
			s->st.clblast_params = d->has_xg;
			snprintf(s->st.path, sizeof(s->st.path), "%s", path);
			apply_shapes_of(be, d);
		}
	}
	pthread_mutex_unlock(&g_lock);
}

void clg_cl_tune_apply_shapes(clg_backend *be)
{
	dev_state *s;

	pthread_mutex_lock(&g_lock);
	s = state_of(be);
	if (s) {
		load_once(be, s);
		if (s->st.loaded)
			apply_shapes_of(be, &s->d);
	}
	pthread_mutex_unlock(&g_lock);
}

int clg_cl_tune_is_opencl(clg_backend *be)
{
	return be && be->iface && be->iface->kind && !strcmp(be->iface->kind, "opencl");
}

clg_status clg_tune_state_of(clg_backend *be, clg_tune_state *out)
{
	dev_state *s;

	memset(out, 0, sizeof(*out));
	if (!clg_cl_tune_is_opencl(be)) {
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

void clg_cl_tune_tile_str(const clg_cl_gemm_tile *t, char *buf, size_t len)
{
	snprintf(buf, len, "%dx%d/%d dot %dx%d", t->tm, t->tn, t->vw, t->dm, t->dn);
}

clg_status clg_tune_gemm_choice(clg_backend *be, int64_t m, int64_t n, int64_t k, int64_t batch, int ta, int tb,
				char *buf, size_t len)
{
	clg_cl_gemm_impl impl;
	clg_cl_gemm_tile t;
	const char *env = clg_cfg_str(CLG_CFG_GEMM);
	char ts[48];
	int tuned;

	if (!clg_cl_tune_is_opencl(be)) {
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
	clg_cl_tune_tile_str(&t, ts, sizeof(ts));
	if (impl == CLG_CL_GEMM_OWN)
		snprintf(buf, len, "own %s (%s)", ts, tuned ? "tuned" : "default");
	else
		snprintf(buf, len, "clblast (%s)", tuned ? "tuned" : "default");
	return CLG_OK;
}

clg_status clg_tune_store_fft_conv(clg_backend *be, const clg_tune_fft_conv *c)
{
	char path[1024];
	tune_data *d;
	clg_status st;

	if (!clg_cl_tune_is_opencl(be))
		return clg_fail(CLG_ERR_UNSUPPORTED, "tune: device '%s' is not an OpenCL device", be ? be->info.name : "(none)");
	if ((st = clg_tune_file_path(be, path, sizeof(path))))
		return st;
	if (!(d = malloc(sizeof(*d))))
		return clg_fail(CLG_ERR_OOM, "tune: out of host memory");
	clg_cl_tune_current(be, d); /* what is stored (or nothing), kept */
	d->has_fftconv = 1;
	d->fftconv = *c;
	st = clg_cl_tune_store_file(be, path, d);
	if (!st)
		clg_cl_tune_use(be, d, path);
	free(d);
	return st;
}

int clg_tune_fft_conv_of(clg_backend *be, clg_tune_fft_conv *c)
{
	dev_state *s;
	int has = 0;

	if (!clg_cl_tune_is_opencl(be))
		return 0;
	pthread_mutex_lock(&g_lock);
	s = state_of(be);
	if (s) {
		load_once(be, s);
		if (s->st.loaded && s->d.has_fftconv) {
			*c = s->d.fftconv;
			has = 1;
		}
	}
	pthread_mutex_unlock(&g_lock);
	return has;
}
