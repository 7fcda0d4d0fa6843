/* Published figures of the GPUs `clgrad bench step --gpu` models a training step on: one table,
 * each row with the document it comes from. fp32 is the vector (non-tensor, non-matrix) rate.
 * The model reads compute units (SMs, CUs, Xe-cores), the SIMD width a work-group's items run
 * in (warp, wavefront, EU SIMD), memory bandwidth and fp32 peak; nothing else. */
#include "gpu_specs.h"

#include <string.h>

static const gpu_spec table[] = {
	{"h100", "NVIDIA H100 SXM5 80GB", 132, 32, 3350, 66.9,
	 "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet (H100 SXM: 67 TFLOPS FP32, "
	 "3.35 TB/s); SM count 132 and warp 32: https://docs.nvidia.com/cuda/hopper-tuning-guide/ and the "
	 "NVIDIA H100 Tensor Core GPU Architecture whitepaper"},
	{"mi300x", "AMD Instinct MI300X", 304, 64, 5300, 163.4,
	 "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html (304 CUs, 5.3 TB/s, "
	 "163.4 TFLOPS FP32 vector); wavefront 64: AMD CDNA 3 ISA / instinct docs"},
	{"a770", "Intel Arc A770 16GB", 32, 16, 560, 19.66,
	 "https://www.intel.com/content/www/us/en/products/sku/229151/intel-arc-a770-graphics-16gb/specifications.html "
	 "(32 Xe-cores, 512 vector engines, 560 GB/s); fp32 2 x 4096 lanes x 2.4 GHz = 19.66 TFLOPS; SIMD8/16/32 "
	 "(16 used): Intel oneAPI GPU optimization guide"},
	{"rx7900", "AMD Radeon RX 7900 XTX", 96, 64, 960, 61.4,
	 "https://www.amd.com/en/products/graphics/desktops/radeon/7000-series/amd-radeon-rx-7900xtx.html (96 CUs, "
	 "960 GB/s, 61.4 TFLOPS FP32); wave32/wave64 (64 used): AMD RDNA 3 ISA reference guide"},
};

const gpu_spec *gpu_spec_find(const char *key)
{
	for (size_t i = 0; key && i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].key, key))
			return &table[i];
	return NULL;
}
