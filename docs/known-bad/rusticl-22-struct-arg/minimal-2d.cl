/* A struct with a two-dimensional array member, passed by value: elementwise.cl's geometry has
 * int st[NOPS][MAXD] (the strides of every operand). clSetKernelArg(1, 100 bytes) must succeed. */
typedef struct {
	int n;
	int st[4][6];
} s2d;

__kernel void k2(__global float *out, const s2d g)
{
	out[get_global_id(0)] = g.n + g.st[1][2];
}
