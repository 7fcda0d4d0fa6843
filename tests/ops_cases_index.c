/* Op-suite cases of the index family (see tests/test_ops.h): random numbers, INDEX_SELECT,
 * INDEX_ADD and ONE_HOT, with explicit operands (odd sizes, batch dims, multi-dim indices, strided
 * views via L_OFFSET, out-of-range indices). All are bit-exact by design (random.cl and index.cl
 * do the reference's float32 operations in its order), except the normal numbers, whose log, sqrt
 * and cos may differ from the host libm's in the last bits. */
#include "test_ops.h"

#include <string.h>

/* The suite reads thr 0 as "the op's default": this tiny positive value means bit-exact. */
#define EXACT 1e-300
/* Normal numbers: each element within a few ulps (relative 2^-21, squared about 2e-13) of the
 * reference's: the normalized squared error of a whole tensor stays below that. */
#define NORMAL_THR 3e-13

static op_case explicit_case(clg_op op, int nops, const int *nd, const int64_t (*shape)[CLG_MAX_DIMS], enum layout l)
{
	op_case c = {.op = op, .layout = l, .lo = -2, .hi = 2, .nops = nops, .thr = EXACT};
	for (int k = 0; k < nops; k++) {
		c.op_nd[k] = nd[k];
		memcpy(c.op_shape[k], shape[k], sizeof(shape[k]));
		c.op_dtype[k] = CLG_F32;
	}
	return c;
}

static void rand_cases(op_case_adder add)
{
	static const struct {
		int nd;
		int64_t shape[CLG_MAX_DIMS];
		const char *tag;
	} shapes[] = {
		{1, {1}, "1"}, {1, {7}, "7"}, {2, {5, 33}, "5x33"}, {3, {3, 1, 17}, "3x1x17"}, {1, {1000}, "1000"},
		{2, {257, 129}, "257x129"},
	};
	/* (seed, offset): the offsets reach across 2^32, so the counter's high word is exercised */
	static const int64_t streams[][2] = {{0, 0}, {12345, 0}, {-7, 4294967200}};
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		for (size_t r = 0; r < sizeof(streams) / sizeof(streams[0]); r++) {
			for (int l = 0; l < 2; l++) {
				enum layout lay = l ? L_OFFSET : L_CONTIG;
				op_case u = explicit_case(CLG_OP_RAND_UNIFORM, 1, &shapes[s].nd, &shapes[s].shape, lay);
				u.tag = shapes[s].tag;
				u.i[0] = streams[r][0], u.i[1] = streams[r][1];
				u.f[0] = 0, u.f[1] = 1;
				add(u);
				u.f[0] = -2.5, u.f[1] = 0.75; /* a range whose rounding can reach hi */
				add(u);
				op_case nrm = u;
				nrm.op = CLG_OP_RAND_NORMAL;
				nrm.thr = NORMAL_THR;
				nrm.f[0] = 0, nrm.f[1] = 1;
				add(nrm);
				nrm.f[0] = 1.5, nrm.f[1] = 0.25;
				add(nrm);
			}
		}
	}
}

/* dst, table, idx for INDEX_SELECT; dst, rows, idx for INDEX_ADD. */
static void index_case_t(op_case_adder add, clg_op op, int ndd, const int64_t *dd, int nds, const int64_t *ds,
			 int ndi, const int64_t *di, int32_t idx_hi, const char *tag, int op_trans)
{
	int nd[3] = {ndd, nds, ndi};
	int64_t shape[3][CLG_MAX_DIMS] = {{0}};
	memcpy(shape[0], dd, sizeof(int64_t) * (size_t)ndd);
	memcpy(shape[1], ds, sizeof(int64_t) * (size_t)nds);
	memcpy(shape[2], di, sizeof(int64_t) * (size_t)ndi);
	for (int l = 0; l < 2; l++) {
		op_case c = explicit_case(op, 3, nd, (const int64_t(*)[CLG_MAX_DIMS])shape, l ? L_OFFSET : L_CONTIG);
		c.op_dtype[2] = CLG_I32;
		c.idx_hi = idx_hi;
		c.tag = tag;
		c.op_trans = op_trans;
		add(c);
	}
}

static void index_case(op_case_adder add, clg_op op, int ndd, const int64_t *dd, int nds, const int64_t *ds, int ndi,
		       const int64_t *di, int32_t idx_hi, const char *tag)
{
	index_case_t(add, op, ndd, dd, nds, ds, ndi, di, idx_hi, tag, 0);
}

#define S(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}

void ops_cases_index(op_case_adder add)
{
	const clg_op sel = CLG_OP_INDEX_SELECT, iadd = CLG_OP_INDEX_ADD;

	rand_cases(add);

	/* INDEX_SELECT: dst (B..., M..., D), table (B..., V, D), idx (B..., M...) */
	index_case(add, sel, S(7, 3), S(5, 3), S(7), 5, "in range");
	index_case(add, sel, S(9, 4), S(5, 4), S(9), 8, "out of range");    /* indices 5..7 give zero rows */
	index_case(add, sel, S(1, 1), S(1, 1), S(1), 1, "1x1");
	index_case(add, sel, S(3, 4, 5), S(7, 5), S(3, 4), 7, "2-D indices");
	index_case(add, sel, S(2, 6, 3), S(2, 5, 3), S(2, 6), 6, "batched");
	index_case(add, sel, S(4, 3, 1), S(4, 9, 1), S(4, 3), 9, "gather-like");
	index_case(add, sel, S(2, 3, 2, 2), S(2, 3, 4, 2), S(2, 3, 2), 4, "2 batch dims");
	index_case(add, sel, S(300, 65), S(1000, 65), S(300), 1003, "large");
	index_case(add, sel, S(8, 50, 17), S(8, 31, 17), S(8, 50), 31, "large batched");
	/* the lookup kernel (index_select_rows: no table batch dims, rows that merge) at other strides,
	 * and the general kernel where the dst's or the indices' leading dims do not merge */
	index_case(add, sel, S(16, 64, 64), S(96, 64), S(16, 64), 100, "embedding lookup");
	index_case_t(add, sel, S(7, 3), S(5, 3), S(7), 6, "dst transposed", 1);
	index_case_t(add, sel, S(7, 3), S(5, 3), S(7), 6, "table transposed", 2);
	index_case_t(add, sel, S(3, 4, 5), S(7, 5), S(3, 4), 7, "2-D indices, dst transposed", 1);
	index_case_t(add, sel, S(3, 4, 5), S(7, 5), S(3, 4), 7, "2-D indices transposed", 4);

	/* ONE_HOT: dst (N, C) = src0 (N) at column idx (N): indices from -3 to C + 2 (rows of zeros out of
	 * [0, C)), as stored and with the dst transposed (column-major), contiguous and offset */
	{
		static const int64_t nc[][2] = {{1, 1}, {6, 5}, {37, 10}, {3, 64}, {128, 10}, {33, 300}, {2, 1030}};
		for (size_t s = 0; s < sizeof(nc) / sizeof(nc[0]); s++) {
			int64_t shape[3][CLG_MAX_DIMS] = {{nc[s][0], nc[s][1]}, {nc[s][0]}, {nc[s][0]}};
			for (int t = 0; t < 4; t++) {
				op_case c = explicit_case(CLG_OP_ONE_HOT, 3, (const int[]){2, 1, 1},
							  (const int64_t(*)[CLG_MAX_DIMS])shape, t & 1 ? L_OFFSET : L_CONTIG);
				c.op_dtype[2] = CLG_I32;
				c.idx_lo = -3;
				c.idx_hi = (int32_t)nc[s][1] + 3;
				c.op_trans = t & 2 ? 1 : 0;
				c.tag = t & 2 ? "out of range, dst transposed" : "out of range";
				add(c);
			}
		}
	}

	/* INDEX_ADD: dst (B..., V, D), rows (B..., M..., D), idx (B..., M...); repeats accumulate */
	index_case(add, iadd, S(5, 3), S(11, 3), S(11), 5, "repeats");
	index_case(add, iadd, S(4, 3), S(9, 3), S(9), 7, "out of range");   /* indices 4..6 add nowhere */
	index_case(add, iadd, S(1, 1), S(1, 1), S(1), 1, "1x1");
	index_case(add, iadd, S(1, 3), S(20, 3), S(20), 1, "one row"); /* a bucket past insertion sort's */
	index_case(add, iadd, S(6, 4), S(3, 5, 4), S(3, 5), 6, "2-D indices");
	index_case(add, iadd, S(2, 5, 3), S(2, 9, 3), S(2, 9), 5, "batched");
	index_case(add, iadd, S(4, 9, 1), S(4, 3, 1), S(4, 3), 9, "scatter-like");
	index_case(add, iadd, S(100, 64), S(1000, 64), S(1000), 100, "large");
	index_case(add, iadd, S(3, 4099), S(50, 4099), S(50), 3, "long rows"); /* rows split in chunks */
	index_case(add, iadd, S(8, 31, 17), S(8, 50, 17), S(8, 50), 33, "large batched");
	/* V * M past the counting-sort threshold (cl_ops_index.c): the sort path, unless forced off */
	index_case(add, iadd, S(5000, 8), S(3000, 8), S(3000), 5200, "sorted, out of range");
	index_case(add, iadd, S(5000, 8), S(3000, 8), S(3000), 40, "sorted, long buckets"); /* merge sort */
	index_case(add, iadd, S(2, 3000, 4), S(2, 2500, 4), S(2, 2500), 3100, "sorted batched");
	index_case(add, iadd, S(3000, 5), S(40, 60, 5), S(40, 60), 3000, "sorted 2-D indices");
}
