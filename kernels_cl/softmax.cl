/* ROW ops: softmax family over the last dim, forward and backward, in two shapes (chosen per
 * device by the host, family "row": backend/kernel_shape.c):
 *   <name>_rows      GPU shape: one work-group per row, coalesced loads, reductions in local
 *                    memory (or sub-groups); last argument the local scratch
 *   <name>_rows_cpu  CPU shape: one work-item per row, sixteen elements at a time where the row
 *                    is contiguous, no barriers; last argument the number of rows
 *   <name>_rows16_cpu  softmax and log-softmax in the CPU shape over short contiguous rows:
 *                    sixteen rows a work-item (arguments as <name>_rows_cpu)
 *   softmax_rows               dst = exp(x - max) / sum(exp(x - max))            (a = x)
 *   log_softmax_rows           dst = x - max - log(sum(exp(x - max)))            (a = x)
 *   softmax_backward_rows      dst = y * (g - sum(g * y))                        (a = g, b = y)
 *   log_softmax_backward_rows  dst = g - exp(y) * sum(g)                         (a = g, b = y)
 * Subtracting the row max keeps exp from overflowing; a NaN in a row makes the row NaN. Each
 * work-item writes only elements it has read, after the row's reductions, so dst may alias a.
 * Expects: -DT=<storage type> -DACC=<compute type>; -DUSE_FP64 when either is double.
 * -DUSE_HALF_STORAGE for T=half (with ACC=float: half is storage only, see LOAD / STORE in prelude.cl).
 * GPU shape: the work-group size must be a power of two; scratch holds one ACC per work-item.
 * The row geometry (row_geom), row_offsets, wg_sum, wg_max, VLOAD16, ACC16 and EXP16 come from prelude.cl. */

#define SOFTMAX_KERNEL(NAME, LOG)                                                                \
CLG_IF(NAME##_rows, __kernel void NAME##_rows(const row_geom g, __global T *d, __global const T *a, __global const T *b, \
			  __local ACC *scratch)                                                   \
{                                                                                                \
	int lid = get_local_id(0), lsz = get_local_size(0), o[3];                                \
	row_offsets(&g, o);                                                                      \
	ACC m = (ACC)(-INFINITY), s = (ACC)0;                                                    \
	for (int j = lid; j < g.C; j += lsz)                                                     \
		m = fmax(m, LOAD(a, o[1] + j * g.cst[1]));                                       \
	m = wg_max(m, scratch);                                                                  \
	for (int j = lid; j < g.C; j += lsz)                                                     \
		s += exp(LOAD(a, o[1] + j * g.cst[1]) - m);                                      \
	s = wg_sum(s, scratch);                                                                  \
	if (LOG) {                                                                               \
		ACC ls = log(s);                                                                 \
		for (int j = lid; j < g.C; j += lsz)                                             \
			STORE(d, o[0] + j * g.cst[0], LOAD(a, o[1] + j * g.cst[1]) - m - ls);    \
	} else {                                                                                 \
		ACC inv = (ACC)1 / s;                                                            \
		for (int j = lid; j < g.C; j += lsz)                                             \
			STORE(d, o[0] + j * g.cst[0], exp(LOAD(a, o[1] + j * g.cst[1]) - m) * inv); \
	}                                                                                        \
})

SOFTMAX_KERNEL(softmax, 0)
SOFTMAX_KERNEL(log_softmax, 1)

#if CLG_WANT(softmax_backward_rows)
__kernel void softmax_backward_rows(const row_geom g, __global T *d, __global const T *a, __global const T *b,
				    __local ACC *scratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0), o[3];
	row_offsets(&g, o);
	ACC s = (ACC)0;
	for (int j = lid; j < g.C; j += lsz)
		s += LOAD(a, o[1] + j * g.cst[1]) * LOAD(b, o[2] + j * g.cst[2]);
	s = wg_sum(s, scratch);
	for (int j = lid; j < g.C; j += lsz) {
		ACC y = LOAD(b, o[2] + j * g.cst[2]);
		STORE(d, o[0] + j * g.cst[0], y * (LOAD(a, o[1] + j * g.cst[1]) - s));
	}
}
#endif

#if CLG_WANT(log_softmax_backward_rows)
__kernel void log_softmax_backward_rows(const row_geom g, __global T *d, __global const T *a,
					__global const T *b, __local ACC *scratch)
{
	int lid = get_local_id(0), lsz = get_local_size(0), o[3];
	row_offsets(&g, o);
	ACC s = (ACC)0;
	for (int j = lid; j < g.C; j += lsz)
		s += LOAD(a, o[1] + j * g.cst[1]);
	s = wg_sum(s, scratch);
	for (int j = lid; j < g.C; j += lsz)
		STORE(d, o[0] + j * g.cst[0], LOAD(a, o[1] + j * g.cst[1]) - exp(LOAD(b, o[2] + j * g.cst[2])) * s);
}
#endif

/* ---- CPU shape: one work-item per row ---------------------------------------------------- */
/* Contiguous rows go sixteen elements at a time (ACC16, EXP16 of prelude.cl), the last C % 16 one
 * at a time; rows with a stride along them one at a time throughout. */

/* max over row x (offset o, stride cs, length C); skips NaN as wg_max does (fmax; the lanes by a
 * compare and a select, which skips it too and costs less than fmax: see reduce.cl's max) */
ACC row_max(__global const T *x, int o, int cs, int C)
{
	ACC m = (ACC)(-INFINITY);
	int j = 0;
	if (cs == 1 && C >= 16) {
		ACC16 m16 = (ACC16)(-INFINITY);
		for (; j + 16 <= C; j += 16) {
			ACC16 v = VLOAD16(x, o + j);
			m16 = select(m16, v, isgreater(v, m16));
		}
		m = HMAX16(m16);
	}
	for (; j < C; j++)
		m = fmax(m, LOAD(x, o + j * cs));
	return m;
}

/* sum over the row of exp(x - m) (E = 1) or of x (E = 0), sixteen partial sums where contiguous */
ACC row_sum(__global const T *x, int o, int cs, int C, ACC m, int E)
{
	ACC s = (ACC)0;
	int j = 0;
	if (cs == 1 && C >= 16) {
		ACC16 s16 = (ACC16)0;
		if (E)
			for (; j + 16 <= C; j += 16)
				s16 += EXP16N(VLOAD16(x, o + j) - m);
		else
			for (; j + 16 <= C; j += 16)
				s16 += VLOAD16(x, o + j);
		s = HSUM16(s16);
	}
	for (; j < C; j++)
		s += E ? exp(LOAD(x, o + j * cs) - m) : LOAD(x, o + j * cs);
	return s;
}

/* Rows of 16, 32, 48 or 64 contiguous elements (attention rows): the row held in four ACC16, read
 * once; max, exp, sum and the store from registers, one pass over memory instead of three.
 * Unused registers repeat v0 (the max is unchanged) and take no exp. Returns 0, touching nothing, where the row does not qualify. */
int softmax_row64(__global T *d, int od, int dcs, __global const T *a, int oa, int acs, int C, int LOG)
{
	ACC16 v0, v1, v2, v3, e0, e1, e2, e3, m16 = (ACC16)(-INFINITY);
	ACC m, k;
	if (dcs != 1 || acs != 1 || C > 64 || C < 16 || (C & 15))
		return 0;
	v0 = VLOAD16(a, oa);
	v1 = C > 16 ? VLOAD16(a, oa + 16) : v0;
	v2 = C > 32 ? VLOAD16(a, oa + 32) : v0;
	v3 = C > 48 ? VLOAD16(a, oa + 48) : v0;
	m16 = select(m16, v0, isgreater(v0, m16)); /* skips NaN, as row_max */
	m16 = select(m16, v1, isgreater(v1, m16));
	m16 = select(m16, v2, isgreater(v2, m16));
	m16 = select(m16, v3, isgreater(v3, m16));
	m = HMAX16(m16);
	e0 = EXP16N(v0 - m);
	e1 = C > 16 ? EXP16N(v1 - m) : (ACC16)0;
	e2 = C > 32 ? EXP16N(v2 - m) : (ACC16)0;
	e3 = C > 48 ? EXP16N(v3 - m) : (ACC16)0;
	k = HSUM16(e0 + e1 + e2 + e3);
	if (LOG) {
		k = LOG1(k);
		VSTORE16(d, od, v0 - m - k);
		if (C > 16)
			VSTORE16(d, od + 16, v1 - m - k);
		if (C > 32)
			VSTORE16(d, od + 32, v2 - m - k);
		if (C > 48)
			VSTORE16(d, od + 48, v3 - m - k);
	} else {
		k = (ACC)1 / k;
		VSTORE16(d, od, e0 * k);
		if (C > 16)
			VSTORE16(d, od + 16, e1 * k);
		if (C > 32)
			VSTORE16(d, od + 32, e2 * k);
		if (C > 48)
			VSTORE16(d, od + 48, e3 * k);
	}
	return 1;
}

/* Softmax's sum pass over row o: the sum of exp(x - m). Where dst holds ACC exactly, softmax (LOG
 * = 0) stores each exp(x - m) in it for its last pass to scale in place: one exp per element
 * instead of two (exp dominates rows that fit in the cache). */
ACC softmax_sum_pass(const row_geom *g, __global T *d, __global const T *a, const int *o, ACC m, int LOG)
{
	int j = 0, C = g->C;
	ACC s = (ACC)0;

#if !defined(USE_HALF_STORAGE) && !defined(USE_BF16_STORAGE)
	if (!LOG) {
		if (g->cst[0] == 1 && g->cst[1] == 1 && C >= 16) {
			ACC16 s16 = (ACC16)0;
			for (; j + 16 <= C; j += 16) {
				ACC16 e = EXP16N(VLOAD16(a, o[1] + j) - m);
				VSTORE16(d, o[0] + j, e);
				s16 += e;
			}
			s = HSUM16(s16);
		}
		for (; j < C; j++) {
			ACC e = exp(LOAD(a, o[1] + j * g->cst[1]) - m);
			STORE(d, o[0] + j * g->cst[0], e);
			s += e;
		}
		return s;
	}
#endif
	return row_sum(a, o[1], g->cst[1], C, m, 1);
}

/* ... and its last pass, k = 1 / sum (softmax) or log(sum) (log-softmax): the row's outputs */
void softmax_last_pass(const row_geom *g, __global T *d, __global const T *a, const int *o, ACC m, ACC k, int LOG)
{
	int j = 0, C = g->C;

#if !defined(USE_HALF_STORAGE) && !defined(USE_BF16_STORAGE)
	if (!LOG) {
		if (g->cst[0] == 1)
			for (; j + 16 <= C; j += 16)
				VSTORE16(d, o[0] + j, VLOAD16(d, o[0] + j) * k);
		for (; j < C; j++)
			STORE(d, o[0] + j * g->cst[0], LOAD(d, o[0] + j * g->cst[0]) * k);
		return;
	}
#endif
	if (g->cst[0] == 1 && g->cst[1] == 1)
		for (; j + 16 <= C; j += 16) {
			ACC16 x = VLOAD16(a, o[1] + j);
			VSTORE16(d, o[0] + j, LOG ? x - m - k : EXP16N(x - m) * k);
		}
	for (; j < C; j++) {
		ACC x = LOAD(a, o[1] + j * g->cst[1]);
		STORE(d, o[0] + j * g->cst[0], LOG ? x - m - k : exp(x - m) * k);
	}
}

/* Row r of softmax (LOG = 0) or log-softmax (LOG = 1), one work-item (CPU shape): max, sum and
 * last pass */
void softmax_row_cpu(const row_geom *g, __global T *d, __global const T *a, int r, int LOG)
{
	int o[3];
	ACC m, s;

	row_offsets_of(g, r, o);
	if (softmax_row64(d, o[0], g->cst[0], a, o[1], g->cst[1], g->C, LOG))
		return;
	m = row_max(a, o[1], g->cst[1], g->C);
	s = softmax_sum_pass(g, d, a, o, m, LOG);
	softmax_last_pass(g, d, a, o, m, LOG ? LOG1(s) : (ACC)1 / s, LOG);
}

/* Rows r0..r1 - 1 of log-softmax the same way, row r's last pass after row r + 1's max and sum
 * passes: its log, which the stores wait for, then completes under them. One row a work-item, the
 * log between the sum and the stores made log-softmax over rows of 512 7-13% slower than softmax
 * (whose reciprocal waits less: no gain there). The outputs are softmax_row_cpu's to the bit. */
void log_softmax_rows_pipelined(const row_geom *g, __global T *d, __global const T *a, int r0, int r1)
{
	int o[3], on[3] = {0, 0, 0}; /* on: the next row's offsets (none after the last) */
	ACC m, s, mn = (ACC)0, sn = (ACC)0;

	row_offsets_of(g, r0, o);
	m = row_max(a, o[1], g->cst[1], g->C);
	s = softmax_sum_pass(g, d, a, o, m, 1);
	for (int r = r0; r < r1; r++) {
		ACC k = LOG1(s);
		if (r + 1 < r1) {
			row_offsets_of(g, r + 1, on);
			mn = row_max(a, on[1], g->cst[1], g->C);
			sn = softmax_sum_pass(g, d, a, on, mn, 1);
		}
		softmax_last_pass(g, d, a, o, m, k, 1);
		for (int i = 0; i < 3; i++)
			o[i] = on[i];
		m = mn;
		s = sn;
	}
}

/* Rows r0..r0 + 15 of softmax or log-softmax, their elements contiguous, C a multiple of 16 (the
 * host's choice, for C <= 64: attention-sized rows). One row a work-item, such rows spend their
 * time waiting along each row's chain (max, exps, sum, divide or log, stores); sixteen rows a
 * work-item give sixteen independent chains, and the rows' maxima and sums gather into one ACC16
 * (tree16_max, tree16_sum: lane i = row i), so the sixteen divides or logs are one vector
 * operation (the builtin log: PoCL's scalar one cost about as much as the row's exps). */
void softmax_rows16(const row_geom *g, __global T *d, __global const T *a, int r0, int LOG)
{
	int od[16], oa[16], ob[16], C = g->C;
	ACC16 v[16];
	ACC m[16], k[16];

	row_offsets16(g, r0, od, oa, ob);
	for (int i = 0; i < 16; i++)
		v[i] = row_max16(a, oa[i], C);
	vstore16(tree16_max(v), 0, m);
	for (int i = 0; i < 16; i++) {
		ACC16 s = (ACC16)0;
		for (int c = 0; c < C; c += 16) {
			ACC16 e = EXP16N(VLOAD16(a, oa[i] + c) - m[i]);
#if !defined(USE_HALF_STORAGE) && !defined(USE_BF16_STORAGE)
			if (!LOG)
				VSTORE16(d, od[i] + c, e);
#endif
			s += e;
		}
		v[i] = s;
	}
	vstore16(LOG ? log(tree16_sum(v)) : (ACC16)1 / tree16_sum(v), 0, k);
	for (int i = 0; i < 16; i++)
		for (int c = 0; c < C; c += 16) {
			ACC16 y;
			if (LOG)
				y = VLOAD16(a, oa[i] + c) - m[i] - k[i];
			else
#if !defined(USE_HALF_STORAGE) && !defined(USE_BF16_STORAGE)
				y = VLOAD16(d, od[i] + c) * k[i];
#else
				y = EXP16N(VLOAD16(a, oa[i] + c) - m[i]) * k[i];
#endif
			VSTORE16(d, od[i] + c, y);
		}
}

/* <name>_rows_cpu: work-item r takes row r; <name>_rows16_cpu: work-item b takes rows 16b..16b+15
 * (softmax_rows16), a last partial block row by row; log_softmax_rows4_cpu: rows 4b..4b+3
 * (log_softmax_rows_pipelined: longer rows) */
#define SOFTMAX_CPU_KERNELS(NAME, LOG)                                                           \
CLG_IF(NAME##_rows_cpu, __kernel void NAME##_rows_cpu(const row_geom g, __global T *d, __global const T *a, __global const T *b, \
			      const int nrows)                                                   \
{                                                                                                \
	int r = get_global_id(0);                                                                \
	if (r < nrows)                                                                           \
		softmax_row_cpu(&g, d, a, r, LOG);                                               \
})                                                                                                \
CLG_IF(NAME##_rows16_cpu, __kernel void NAME##_rows16_cpu(const row_geom g, __global T *d, __global const T *a, __global const T *b, \
				const int nrows)                                                 \
{                                                                                                \
	int r0 = get_global_id(0) * 16;                                                          \
	if (r0 + 16 <= nrows)                                                                    \
		softmax_rows16(&g, d, a, r0, LOG);                                               \
	else                                                                                     \
		for (int r = r0; r < nrows; r++)                                                 \
			softmax_row_cpu(&g, d, a, r, LOG);                                       \
})

SOFTMAX_CPU_KERNELS(softmax, 0)
SOFTMAX_CPU_KERNELS(log_softmax, 1)

#if CLG_WANT(log_softmax_rows4_cpu)
__kernel void log_softmax_rows4_cpu(const row_geom g, __global T *d, __global const T *a, __global const T *b,
				    const int nrows)
{
	int r0 = get_global_id(0) * 4;
	if (r0 < nrows)
		log_softmax_rows_pipelined(&g, d, a, r0, min(r0 + 4, nrows));
}
#endif

#if CLG_WANT(softmax_backward_rows_cpu)
__kernel void softmax_backward_rows_cpu(const row_geom g, __global T *d, __global const T *a, __global const T *b,
					const int nrows)
{
	int r = get_global_id(0), o[3], j = 0;
	ACC s = (ACC)0;
	if (r >= nrows)
		return;
	row_offsets_of(&g, r, o);
	if (g.cst[1] == 1 && g.cst[2] == 1 && g.C >= 16) {
		ACC16 s16 = (ACC16)0;
		for (; j + 16 <= g.C; j += 16)
			s16 += VLOAD16(a, o[1] + j) * VLOAD16(b, o[2] + j);
		s = HSUM16(s16);
	}
	for (; j < g.C; j++)
		s += LOAD(a, o[1] + j * g.cst[1]) * LOAD(b, o[2] + j * g.cst[2]);
	j = 0;
	if (g.cst[0] == 1 && g.cst[1] == 1 && g.cst[2] == 1)
		for (; j + 16 <= g.C; j += 16)
			VSTORE16(d, o[0] + j, VLOAD16(b, o[2] + j) * (VLOAD16(a, o[1] + j) - s));
	for (; j < g.C; j++) {
		ACC y = LOAD(b, o[2] + j * g.cst[2]);
		STORE(d, o[0] + j * g.cst[0], y * (LOAD(a, o[1] + j * g.cst[1]) - s));
	}
}
#endif

#if CLG_WANT(log_softmax_backward_rows_cpu)
__kernel void log_softmax_backward_rows_cpu(const row_geom g, __global T *d, __global const T *a,
					    __global const T *b, const int nrows)
{
	int r = get_global_id(0), o[3];
	if (r >= nrows)
		return;
	row_offsets_of(&g, r, o);
	ACC s = row_sum(a, o[1], g.cst[1], g.C, (ACC)0, 0);
	int j = 0;
	if (g.cst[0] == 1 && g.cst[1] == 1 && g.cst[2] == 1)
		for (; j + 16 <= g.C; j += 16)
			VSTORE16(d, o[0] + j, VLOAD16(a, o[1] + j) - EXP16(VLOAD16(b, o[2] + j)) * s);
	for (; j < g.C; j++)
		STORE(d, o[0] + j * g.cst[0], LOAD(a, o[1] + j * g.cst[1]) - exp(LOAD(b, o[2] + j * g.cst[2])) * s);
}
#endif
