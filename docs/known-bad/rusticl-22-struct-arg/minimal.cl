/* A geometry struct passed by value and read in a loop, as every clgrad kernel does (rgeom in
 * reduce.cl, the strided views of elementwise.cl). */
typedef struct {
	int n;        /* dims */
	int shape[6];
	int st[6];    /* strides */
} geom;

__kernel void offsets(__global float *out, const geom g)
{
	int o = get_global_id(0), off = 0;
	for (int d = g.n - 1; d >= 0; d--) {
		off += (o % g.shape[d]) * g.st[d];
		o /= g.shape[d];
	}
	out[get_global_id(0)] = off;
}
