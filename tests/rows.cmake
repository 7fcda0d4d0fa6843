# Row kernels in both shapes (family "row": kernels_cl/softmax.cl, norm.cl, reduce.cl, fused.cl's
# cross-entropy; chosen by backend/kernel_shape.c): the op suite for each row op with
# CLGRAD_KERNEL_SHAPE=row=cpu and row=gpu on every device, whatever its type (the cases at odd
# row lengths and many rows are in tests/ops_cases_rows.c), and the gradient checks with each
# shape.
set(CLG_ROW_OPS softmax log_softmax softmax_backward log_softmax_backward layer_norm layer_norm_backward
    sum max min argmax softmax_xent softmax_xent_backward)
set(CLG_ROW_ENV "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
# one process walks both shapes (test_ops --with); the ops as one list
list(JOIN CLG_ROW_OPS "," CLG_ROW_OPS_LIST)
clg_env_test(test_ops_rows 600 "${CLG_TEST_ENV}" test_ops --op ${CLG_ROW_OPS_LIST}
  --with "KERNEL_SHAPE=row=cpu ROWS16=0" --with "KERNEL_SHAPE=row=gpu ROWS16=0")
clg_env_test(test_grad_rows 600 "${CLG_TEST_ENV}"
  test_grad --with KERNEL_SHAPE=row=cpu --with KERNEL_SHAPE=row=gpu)
# The CPU shape's sixteen rows a work-item (softmax, log-softmax, layer norm and its backward, the
# cross-entropy forward, over rows of 16..64 contiguous elements; the runs above keep to one row a
# work-item): wherever the rows allow
set(CLG_ROWS16_OPS softmax log_softmax layer_norm layer_norm_backward softmax_xent)
list(JOIN CLG_ROWS16_OPS "," CLG_ROWS16_OPS_LIST)
clg_env_test(test_ops_rows_cpu16 600 "${CLG_TEST_ENV}"
  test_ops --op ${CLG_ROWS16_OPS_LIST} --with "KERNEL_SHAPE=row=cpu ROWS16=1")

# The GPU shape under Oclgrind with a GPU's limits (256 work-items, 32 KiB of local memory), and
# the CPU shape there too: small cases, failing on any memory error or data race Oclgrind reports.
# One process per Oclgrind profile (its limits are read when its platform loads), the two shapes
# walked inside it.
if(CLG_OCLGRIND)
  set(CLG_ROWS_OCLGRIND_OPS softmax,log_softmax_backward,layer_norm,layer_norm_backward,sum,argmax,softmax_xent,softmax_xent_backward)
  clg_env_test(test_ops_rows_oclgrind 900 "${CLG_ROW_ENV};OCLGRIND_MAX_WGSIZE=256;OCLGRIND_LOCAL_MEM_SIZE=32768"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small
            --op ${CLG_ROWS_OCLGRIND_OPS} --with KERNEL_SHAPE=row=cpu --with KERNEL_SHAPE=row=gpu)
  clg_env_test(test_ops_rows_oclgrind_cpu16 900 "${CLG_ROW_ENV}"
    ${CMAKE_SOURCE_DIR}/tests/run_oclgrind.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:test_ops> --small
            --op softmax,log_softmax,layer_norm_backward,softmax_xent --with "KERNEL_SHAPE=row=cpu ROWS16=1")
endif()

# Sub-groups against the work-group tree on a runtime that has them: Intel's OpenCL CPU runtime,
# when configured with -DCLG_INTEL_OCL_VENDORS=<folder of intel.icd> (and -DCLG_INTEL_OCL_LIB=<its
# lib folder> when not on the loader's path). The GPU shape runs with sub-groups (as
# cl_intel_subgroups in OpenCL C 1.2, and as cl_khr_subgroups in OpenCL C 2.0:
# CLGRAD_SUBGROUPS=khr) and with CLGRAD_SUBGROUPS=0, each against the reference; a copy of the
# kernels whose sub-group sum is 0.1% off must fail, so the sub-group path is known to run.
# By default, the runtime that scripts/setup_intel_ocl.sh installed (tests/intel.cmake finds it),
# over fewer ops to keep CI short: the sum, softmax, layer norm (both ways) and cross-entropy.
# clg_kernel_mutant(DIR FILE FROM TO WHAT): DIR gets a copy of kernels_cl whose FILE has FROM replaced
# by TO, for a test that must fail on it (configuring stops, naming WHAT, where FROM is not in FILE)
function(clg_kernel_mutant dir file from to what)
  file(READ ${CMAKE_SOURCE_DIR}/kernels_cl/${file} src)
  string(REPLACE "${from}" "${to}" mutant "${src}")
  if(mutant STREQUAL src)
    message(FATAL_ERROR "rows.cmake: ${what} was not found in ${file}")
  endif()
  file(GLOB all ${CMAKE_SOURCE_DIR}/kernels_cl/*.cl)
  file(COPY ${all} DESTINATION ${dir})
  file(WRITE ${dir}/${file} "${mutant}")
endfunction()

set(CLG_INTEL_OCL_VENDORS "" CACHE PATH "OCL_ICD_VENDORS folder naming Intel's OpenCL runtime (tests/rows.cmake)")
set(CLG_INTEL_OCL_LIB "" CACHE PATH "library folder of Intel's OpenCL runtime (tests/rows.cmake)")
set(CLG_SG_OPS ${CLG_ROW_OPS})
set(CLG_SG_MODES auto 0 khr)
if(NOT CLG_INTEL_OCL_VENDORS AND DEFINED CLG_INTEL_LD AND NOT "$ENV{CLGRAD_SKIP_INTEL}" STREQUAL "1")
  set(CLG_INTEL_OCL_VENDORS "${CLGRAD_INTEL_OCL_DIR}/icd")
  set(CLG_INTEL_OCL_LIB "${CLG_INTEL_LD}")
  set(CLG_SG_OPS sum softmax layer_norm layer_norm_backward softmax_xent)
  set(CLG_SG_MODES auto 0)
endif()
if(CLG_INTEL_OCL_VENDORS)
  set(CLG_INTEL_ENV "${CLG_ROW_ENV};OCL_ICD_VENDORS=${CLG_INTEL_OCL_VENDORS}")
  if(CLG_INTEL_OCL_LIB)
    list(APPEND CLG_INTEL_ENV "LD_LIBRARY_PATH=${CLG_INTEL_OCL_LIB}")
  endif()
  # every sub-group mode in one process (SUBGROUPS is read at a device's open: reopened per --with)
  set(clg_with "")
  foreach(sg IN LISTS CLG_SG_MODES)
    list(APPEND clg_with --with "KERNEL_SHAPE=row=gpu SUBGROUPS=${sg}")
  endforeach()
  list(JOIN CLG_SG_OPS "," clg_sg_ops)
  add_test(NAME test_ops_rows_intel_subgroups COMMAND test_ops --op ${clg_sg_ops} --device Intel ${clg_with})
  set_tests_properties(test_ops_rows_intel_subgroups PROPERTIES TIMEOUT 600 ENVIRONMENT "${CLG_INTEL_ENV}")
  set(CLG_SG_MUTANT_DIR ${CMAKE_BINARY_DIR}/subgroup_mutant_kernels)
  clg_kernel_mutant(${CLG_SG_MUTANT_DIR} prelude.cl "v = sub_group_reduce_add(v);"
    "v = sub_group_reduce_add(v) * (ACC)1.001;" "the sub-group sum line")
  add_test(NAME test_ops_rows_intel_catches_wrong_subgroup_sum COMMAND test_ops --op sum --device Intel)
  set_tests_properties(test_ops_rows_intel_catches_wrong_subgroup_sum PROPERTIES TIMEOUT 600
    PASS_REGULAR_EXPRESSION "sum [^\n]*normalized error"
    ENVIRONMENT "${CLG_INTEL_ENV};CLGRAD_CACHE_DIR=0;CLGRAD_KERNEL_DIR=${CLG_SG_MUTANT_DIR};CLGRAD_KERNEL_SHAPE=row=gpu;CLGRAD_SUBGROUPS=auto")
endif()

# Each shape's runs must reach that shape's kernels: a copy of softmax.cl whose CPU-shaped softmax
# is 0.1% off fails under row=cpu, and one whose GPU-shaped softmax is off fails under row=gpu;
# cpu16: the sixteen-row kernel, and cpu4: the pipelined four-row log-softmax, under CLGRAD_ROWS16=1.
foreach(shape cpu gpu cpu16 cpu4)
  set(clg_rows16 0)
  set(clg_op softmax)
  if(shape STREQUAL cpu)
    set(clg_from "LOG ? LOG1(s) : (ACC)1 / s, LOG);")
    set(clg_to "LOG ? LOG1(s) : (ACC)1.001 / s, LOG);")
  elseif(shape STREQUAL cpu16)
    set(clg_from "(ACC16)1 / tree16_sum(v)")
    set(clg_to "(ACC16)1.001 / tree16_sum(v)")
    set(clg_rows16 1)
  elseif(shape STREQUAL cpu4)
    set(clg_from "\t\tACC k = LOG1(s);")
    set(clg_to "${clg_from} k *= (ACC)1.001;")
    set(clg_rows16 1)
    set(clg_op log_softmax)
  else()
    set(clg_from "\t\tACC inv = (ACC)1 / s;")
    set(clg_to "${clg_from} inv *= (ACC)1.001;")
  endif()
  string(REGEX REPLACE "16|4" "" clg_shape "${shape}")
  set(clg_dir ${CMAKE_BINARY_DIR}/rows_mutant_${shape})
  clg_kernel_mutant(${clg_dir} softmax.cl "${clg_from}" "${clg_to}" "the ${shape}-shaped softmax's scale line")
  add_test(NAME test_ops_rows_${shape}_catches_wrong_kernel COMMAND test_ops --op ${clg_op})
  set_tests_properties(test_ops_rows_${shape}_catches_wrong_kernel PROPERTIES TIMEOUT 600
    PASS_REGULAR_EXPRESSION "${clg_op} \\[[^\n]*normalized error"
    SKIP_REGULAR_EXPRESSION "no OpenCL device present"
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=0;CLGRAD_KERNEL_DIR=${clg_dir};CLGRAD_KERNEL_SHAPE=row=${clg_shape};CLGRAD_ROWS16=${clg_rows16}")
endforeach()

# ... and a copy of norm.cl whose sixteen-row layer norm (forward and backward) has rstd 0.1% off
set(clg_dir ${CMAKE_BINARY_DIR}/rows_mutant_norm16)
clg_kernel_mutant(${clg_dir} norm.cl "rstd16 = rsqrt(tree16_sum(v) / (ACC)C + eps);"
  "rstd16 = rsqrt(tree16_sum(v) / (ACC)C + eps) * (ACC)1.001;" "the sixteen-row layer norm's rstd line")
foreach(op layer_norm layer_norm_backward)
  add_test(NAME test_ops_rows_cpu16_catches_wrong_${op} COMMAND test_ops --op ${op})
  set_tests_properties(test_ops_rows_cpu16_catches_wrong_${op} PROPERTIES TIMEOUT 600
    PASS_REGULAR_EXPRESSION "${op} \\[[^\n]*rows16[^\n]*normalized error"
    SKIP_REGULAR_EXPRESSION "no OpenCL device present"
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=0;CLGRAD_KERNEL_DIR=${clg_dir};CLGRAD_KERNEL_SHAPE=row=cpu;CLGRAD_ROWS16=1")
endforeach()

# Softmax is the same for any shift of a row, so a wrong row max shows only through exp's range:
# a copy whose max is the row's first element (softmax.cl and fused.cl's cross-entropy, the shape
# under test) must fail on the large-logit cases of tests/ops_cases_rows.c (logits in [-80, 80]),
# which logits in [-2, 2] or [80, 120] let pass. cpu16: the same under sixteen rows a work-item.
file(READ ${CMAKE_SOURCE_DIR}/kernels_cl/softmax.cl CLG_SOFTMAX_SRC)
file(READ ${CMAKE_SOURCE_DIR}/kernels_cl/fused.cl CLG_FUSED_SRC)
file(GLOB CLG_ALL_KERNELS ${CMAKE_SOURCE_DIR}/kernels_cl/*.cl)
foreach(shape cpu gpu cpu16)
  set(clg_rows16 0)
  if(shape STREQUAL cpu16)
    # sixteen rows a work-item: rows 0 and 1 of each block take a max of -100
    set(clg_sm_from "vstore16(tree16_max(v), 0, m);")
    set(clg_sm_to "${clg_sm_from} m[1] = m[0] = -100;")
    set(clg_xe_from "${clg_sm_from}")
    set(clg_xe_to "${clg_sm_to}")
    set(clg_rows16 1)
  elseif(shape STREQUAL cpu)
    set(clg_sm_from "\treturn m;\n")
    set(clg_sm_to "\treturn LOAD(x, o);\n")
    set(clg_xe_from "\tj = 0;\n\tif (vec) {\n\t\tACC16 s16")
    set(clg_xe_to "\tm = XLOAD(x, ox);\n${clg_xe_from}")
  else()
    set(clg_sm_from "m = wg_max(m, scratch);")
    set(clg_sm_to "${clg_sm_from} m = LOAD(a, o[1]);")
    set(clg_xe_from "m = wg_max(m, scratch);")
    set(clg_xe_to "${clg_xe_from} m = XLOAD(x, AT(1, n, 0));")
  endif()
  string(REPLACE "${clg_sm_from}" "${clg_sm_to}" clg_sm "${CLG_SOFTMAX_SRC}")
  string(REPLACE "${clg_xe_from}" "${clg_xe_to}" clg_xe "${CLG_FUSED_SRC}")
  if(clg_sm STREQUAL CLG_SOFTMAX_SRC OR clg_xe STREQUAL CLG_FUSED_SRC)
    message(FATAL_ERROR "rows.cmake: the ${shape}-shaped row max line was not found in softmax.cl or fused.cl")
  endif()
  string(REPLACE "16" "" clg_shape "${shape}")
  set(clg_dir ${CMAKE_BINARY_DIR}/rows_max_mutant_${shape})
  file(COPY ${CLG_ALL_KERNELS} DESTINATION ${clg_dir})
  file(WRITE ${clg_dir}/softmax.cl "${clg_sm}")
  file(WRITE ${clg_dir}/fused.cl "${clg_xe}")
  foreach(op softmax softmax_xent)
    add_test(NAME test_ops_rows_${shape}_catches_wrong_max_${op} COMMAND test_ops --op ${op})
    set_tests_properties(test_ops_rows_${shape}_catches_wrong_max_${op} PROPERTIES TIMEOUT 600
      PASS_REGULAR_EXPRESSION "${op} \\[[^\n]*large logits[^\n]*normalized error"
      SKIP_REGULAR_EXPRESSION "no OpenCL device present"
      ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=0;CLGRAD_KERNEL_DIR=${clg_dir};CLGRAD_KERNEL_SHAPE=row=${clg_shape};CLGRAD_ROWS16=${clg_rows16}")
  endforeach()
endforeach()

# The exp of the CPU shape's row kernels (prelude.cl's polynomial) must keep exp(-inf) = 0 and NaN:
# a copy without its lower clamp (exp(-inf) NaN) fails on the -inf rows of tests/ops_cases_rows.c,
# one clamping by fmax (NaN taken to exp(-88)) on the NaN rows.
set(clg_from "x = select(x, (type)-88.0296919f, isless(x, (type)-88.0296919f));")
foreach(kind ninf nan)
  if(kind STREQUAL ninf)
    set(clg_to "")
    set(clg_rows "-inf rows special")
  else()
    set(clg_to "x = fmax(x, (type)-88.0296919f);")
    set(clg_rows "nan rows special")
  endif()
  set(clg_dir ${CMAKE_BINARY_DIR}/rows_exp_mutant_${kind})
  clg_kernel_mutant(${clg_dir} prelude.cl "${clg_from}" "${clg_to}" "exp's lower clamp line")
  add_test(NAME test_ops_rows_cpu16_catches_exp_${kind} COMMAND test_ops --op softmax)
  set_tests_properties(test_ops_rows_cpu16_catches_exp_${kind} PROPERTIES TIMEOUT 600
    PASS_REGULAR_EXPRESSION "softmax \\[[^\n]*${clg_rows}[^\n]*normalized error"
    SKIP_REGULAR_EXPRESSION "no OpenCL device present"
    ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=0;CLGRAD_KERNEL_DIR=${clg_dir};CLGRAD_KERNEL_SHAPE=row=cpu;CLGRAD_ROWS16=1")
endforeach()
