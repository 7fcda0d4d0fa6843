# ---- Intel's OpenCL CPU runtime as a second real vendor (scripts/setup_intel_ocl.sh) ----------
# Included by tests/CMakeLists.txt after every other part, so the tests it names exist. Where
# setup_intel_ocl.sh has filled its folder, the tests that run on every device see Intel beside
# PoCL (OCL_ICD_VENDORS holds both): two compilers, two sets of kernel-shape choices, the same
# reference (test_parallel_cli: data parallel over two vendors, not the slow float64 reference
# beside PoCL). Only these tests, so the suite's time grows by their Intel part alone (the CLI
# tests keep PoCL as the default device).
# CLGRAD_SKIP_INTEL=1 at configure time, or -DCLGRAD_INTEL_OCL_DIR=OFF, leaves Intel out.
set(CLG_INTEL_TESTS test_devices test_cli_devices_json test_kernels_compile test_ops test_grad
  test_ops_gemm test_train test_compare_quick test_device_auto test_device_default
  test_ops_gemm_clblast_indirect test_clblast_switch test_staging test_half_selftest
  test_parallel_cli test_ops_one_hot_gpu_shape)

if(NOT DEFINED CLGRAD_INTEL_OCL_DIR)
  if(DEFINED ENV{CLGRAD_INTEL_OCL_DIR})
    set(CLG_INTEL_DEFAULT "$ENV{CLGRAD_INTEL_OCL_DIR}")
  elseif(DEFINED ENV{XDG_CACHE_HOME})
    set(CLG_INTEL_DEFAULT "$ENV{XDG_CACHE_HOME}/clgrad/intel-ocl")
  else()
    set(CLG_INTEL_DEFAULT "$ENV{HOME}/.cache/clgrad/intel-ocl")
  endif()
  set(CLGRAD_INTEL_OCL_DIR "${CLG_INTEL_DEFAULT}" CACHE PATH
    "folder filled by scripts/setup_intel_ocl.sh: the tests on every device include Intel's runtime (OFF: never)")
endif()

if("$ENV{CLGRAD_SKIP_INTEL}" STREQUAL "1")
  message(STATUS "Intel OpenCL CPU runtime: skipped (CLGRAD_SKIP_INTEL=1)")
elseif(CLGRAD_INTEL_OCL_DIR AND EXISTS "${CLGRAD_INTEL_OCL_DIR}/icd/intel.icd"
       AND EXISTS "${CLGRAD_INTEL_OCL_DIR}/lib/libintelocl.so")
  set(CLG_INTEL_LD "${CLGRAD_INTEL_OCL_DIR}/lib")
  if(DEFINED ENV{LD_LIBRARY_PATH} AND NOT "$ENV{LD_LIBRARY_PATH}" STREQUAL "")
    string(APPEND CLG_INTEL_LD ":$ENV{LD_LIBRARY_PATH}")
  endif()
  set(CLG_INTEL_ON "")
  foreach(t IN LISTS CLG_INTEL_TESTS)
    if(TEST ${t})
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT
        "OCL_ICD_VENDORS=${CLGRAD_INTEL_OCL_DIR}/icd" "LD_LIBRARY_PATH=${CLG_INTEL_LD}")
      list(APPEND CLG_INTEL_ON ${t})
    endif()
  endforeach()
  list(JOIN CLG_INTEL_ON " " CLG_INTEL_ON_TEXT)
  message(STATUS "Intel OpenCL CPU runtime: ${CLGRAD_INTEL_OCL_DIR}; on Intel too: ${CLG_INTEL_ON_TEXT}")
else()
  message(STATUS "Intel OpenCL CPU runtime: not in '${CLGRAD_INTEL_OCL_DIR}' (scripts/setup_intel_ocl.sh): tests on PoCL only")
endif()
