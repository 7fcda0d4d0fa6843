/* Published figures of the GPUs `clgrad bench step --gpu` models a training step on: one table,
 * each row with the document it comes from. fp32 is the vector (non-tensor, non-matrix) rate.
 * The model reads compute units (SMs, CUs, Xe-cores), the SIMD width a work-group's items run
 * in (warp, wavefront, EU SIMD), memory bandwidth and fp32 peak; nothing else. */
#include "gpu_specs.h"

#include <string.h>

static const gpu_spec table[] = {
	{"h100", "NVIDIA H100 SXM5 80GB", 132, 32, 3350, 66.9,
	 "NVIDIA H100 Tensor Core GPU datasheet, SXM column (132 SMs, FP32 67 TFLOPS, 3.35 TB/s): "
	 "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet; FP32 VFMA 66.9: "
	 "https://glennklockwood.com/garden/processors/h100; warp 32: CUDA programming guide"},
	{"mi300x", "AMD Instinct MI300X", 304, 64, 5300, 163.4,
	 "AMD Instinct MI300X data sheet (304 CUs, 5.3 TB/s, 163.4 TFLOPS FP32 vector): "
	 "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html; wavefront 64: AMD CDNA 3 ISA"},
	{"a770", "Intel Arc A770 16GB", 32, 16, 560, 19.66,
	 "Intel Arc A770 16GB specifications (32 Xe-cores, 560 GB/s): "
	 "https://www.intel.com/content/www/us/en/products/sku/229151/intel-arc-a770-graphics-16gb/specifications.html; "
	 "512 EUs = 4096 fp32 lanes: https://chipsandcheese.com/2022/10/20/microbenchmarking-intels-arc-a770/; "
	 "19.66 TFLOPS = 4096 x 2 x 2.4 GHz (at the 2.1 GHz graphics clock: 17.2); SIMD8/16/32, 16 used"},
	{"rx7900", "AMD Radeon RX 7900 XTX", 96, 64, 960, 61.4,
	 "AMD Radeon RX 7900 XTX specifications (96 CUs, 960 GB/s, 61.4 TFLOPS FP32): "
	 "https://www.amd.com/en/products/graphics/desktops/radeon/7000-series/amd-radeon-rx-7900xtx.html, as tabled "
	 "at https://guru3d.com/review/xfx-radeon-rx-7900-xtx-magair-review/page-4; wave32/64, 64 used"},
};

const gpu_spec *gpu_spec_find(const char *key)
{
	for (size_t i = 0; key && i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].key, key))
			return &table[i];
	return NULL;
}
