/* Op-suite cases of the FFT ops (clg_ops.def, FFT_* and COMPLEX_MUL): lengths 1, 2, 8, 12, 17 (a
 * prime clFFT cannot do: the own kernels), 60, 1024 and 1000 (through clFFT), 5, 7 and 28 (the
 * sides of the 2-D cases, whose transforms are these ops) and 97 (the own kernels
 * again, long enough to show their rounding), batch 1 and many (3 x 5 rows, one leading dim of
 * 64 at 1024), each of numpy's three norms as the op's scale (1, 1/sqrt(N), 1/N), both directions
 * of fft_c2c, packed operands and offset / padded ones (which go through temporaries); and lengths
 * with prime factors above 13 long enough for Bluestein's path (131, 257, 272 = 17 x 16, 1031, 4099). */
#include "test_ops.h"

#include <math.h>

enum { NORM_BACKWARD, NORM_ORTHO, NORM_FORWARD };

static double scale_of(int norm, int inverse, int64_t n)
{
	if (norm == NORM_ORTHO)
		return 1.0 / sqrt((double)n);
	if (norm == NORM_FORWARD)
		return inverse ? 1.0 : 1.0 / (double)n;
	return inverse ? 1.0 / (double)n : 1.0;
}

static op_case fft_case(clg_op op, int64_t n, int nbatch, const int64_t *batch, int norm, int inverse, enum layout l)
{
	static const char *tags[2][3] = {{"norm backward", "norm ortho", "norm forward"},
					 {"inverse, norm backward", "inverse, norm ortho", "inverse, norm forward"}};
	int64_t bins = n / 2 + 1;
	int real_src = op == CLG_OP_FFT_R2C, real_dst = op == CLG_OP_FFT_C2R;
	op_case c = {.op = op, .layout = l, .lo = -1, .hi = 1, .nops = 2, .tag = tags[inverse][norm]};

	c.f[0] = scale_of(norm, inverse || op == CLG_OP_FFT_C2R, n);
	c.i[0] = inverse;
	for (int k = 0; k < 2; k++) {
		int real = k == 0 ? real_dst : real_src;
		int nd = 0;
		for (int d = 0; d < nbatch; d++)
			c.op_shape[k][nd++] = batch[d];
		c.op_shape[k][nd++] = op == CLG_OP_FFT_C2C || (k == 0 ? real_dst : real_src) ? n : bins;
		if (!real)
			c.op_shape[k][nd++] = 2;
		c.op_nd[k] = nd;
	}
	return c;
}

static op_case cmul_case(int nd, const int64_t *shape, int conj, enum layout l)
{
	op_case c = {.op = CLG_OP_COMPLEX_MUL, .layout = l, .lo = -2, .hi = 2, .nops = 3, .tag = conj ? "conj" : NULL};
	c.i[0] = conj;
	for (int k = 0; k < 3; k++) {
		c.op_nd[k] = nd;
		for (int d = 0; d < nd; d++)
			c.op_shape[k][d] = shape[d];
	}
	return c;
}

void ops_cases_fft(op_case_adder add)
{
	static const int64_t lengths[] = {1, 2, 5, 7, 8, 12, 17, 28, 60, 97, 1000, 1024};
	static const clg_op ops[] = {CLG_OP_FFT_C2C, CLG_OP_FFT_R2C, CLG_OP_FFT_C2R};
	static const int64_t many[] = {3, 5}, wide[] = {64};
	static const int64_t cshapes[][4] = {{1, 2}, {2, 7, 2}, {3, 3, 5, 2}, {2, 300, 2}, {3, 4, 33, 2}};

	for (size_t o = 0; o < 3; o++)
		for (size_t s = 0; s < sizeof(lengths) / sizeof(lengths[0]); s++)
			for (int b = 0; b < 2; b++)
				for (int norm = 0; norm < 3; norm++)
					for (int inv = 0; inv <= (ops[o] == CLG_OP_FFT_C2C); inv++)
						for (int l = 0; l < 2; l++) {
							int64_t n = lengths[s];
							/* batch "many": 3 x 5 rows, or 64 rows of the long lengths */
							add(fft_case(ops[o], n, b ? (n >= 1000 ? 1 : 2) : 0, n >= 1000 ? wide : many,
								     norm, inv, l ? L_OFFSET : L_CONTIG));
						}
	/* lengths clFFT cannot do with n^2 batch above CLG_FFT_DIRECT_MAX (Bluestein's path): primes
	 * of each size, 4 rows (the chirp's spectrum broadcast over them), a composite with factor 17,
	 * 1031 (one row) and 4099, on every op, packed and offset */
	for (size_t o = 0; o < 3; o++)
		for (int l = 0; l < 2; l++) {
			static const int64_t four[] = {4};
			static const int64_t plen[] = {131, 257, 17 * 16};
			for (size_t s = 0; s < sizeof(plen) / sizeof(plen[0]); s++)
				for (int inv = 0; inv <= (ops[o] == CLG_OP_FFT_C2C); inv++)
					add(fft_case(ops[o], plen[s], 1, four, NORM_BACKWARD, inv, l ? L_OFFSET : L_CONTIG));
			add(fft_case(ops[o], 1031, 0, four, NORM_ORTHO, 0, l ? L_OFFSET : L_CONTIG));
			add(fft_case(ops[o], 4099, 1, four, NORM_FORWARD, ops[o] == CLG_OP_FFT_C2C, l ? L_OFFSET : L_CONTIG));
		}
	for (size_t s = 0; s < sizeof(cshapes) / sizeof(cshapes[0]); s++)
		for (int conj = 0; conj < 2; conj++)
			for (int l = 0; l < 2; l++)
				add(cmul_case((int)cshapes[s][0], &cshapes[s][1], conj, l ? L_OFFSET : L_CONTIG));
}
