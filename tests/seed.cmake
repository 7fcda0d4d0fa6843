# The op suite's inputs (suite/op_suite.c's case_seed: a hash of the op's name and the case's index
# among its op's cases, never the op's position in clg_ops.def) and test_ops --seed, which mixes
# another value in: the ops whose tolerances were derived for any input, on inputs other than
# ctest's (log-softmax's 16-bit results near 0, cross-entropy backward's long row sums), and the
# planted kernels those tolerances must still catch. Each a second or two.
clg_env_test(test_ops_other_seed 600 "${CLG_TEST_ENV}"
  test_ops --op log_softmax,softmax_xent_backward --seed 20261202)
add_test(NAME test_ops_seed_rejects_bad_value COMMAND test_ops --seed -1)
set_tests_properties(test_ops_seed_rejects_bad_value PROPERTIES TIMEOUT 60
  PASS_REGULAR_EXPRESSION "--seed '-1': expected an integer from 0 to 18446744073709551615")

# clg_seed_mutant(NAME FILE OPS PASS_REGEX FROM TO [FROM TO]...): tests test_ops_catches_NAME_<shape>
# run test_ops --op OPS on a copy of kernels_cl whose FILE has each FROM replaced (every
# occurrence) by its TO, in each row shape (one row a work-item), and pass when a case fails as
# PASS_REGEX says (the disk cache keys programs by their source: the mutant's stay apart)
function(clg_seed_mutant name file ops regex)
  file(READ ${CMAKE_SOURCE_DIR}/kernels_cl/${file} src)
  set(args ${ARGN})
  while(args)
    list(POP_FRONT args from to)
    string(REPLACE "${from}" "${to}" mutant "${src}")
    if(mutant STREQUAL src)
      message(FATAL_ERROR "seed.cmake: '${from}' was not found in ${file}")
    endif()
    set(src "${mutant}")
  endwhile()
  set(dir ${CMAKE_BINARY_DIR}/seed_mutant_${name})
  file(GLOB all ${CMAKE_SOURCE_DIR}/kernels_cl/*.cl)
  file(COPY ${all} DESTINATION ${dir})
  file(WRITE ${dir}/${file} "${src}")
  foreach(shape cpu gpu)
    add_test(NAME test_ops_catches_${name}_${shape} COMMAND test_ops --op ${ops})
    set_tests_properties(test_ops_catches_${name}_${shape} PROPERTIES TIMEOUT 600
      PASS_REGULAR_EXPRESSION "${regex}" SKIP_REGULAR_EXPRESSION "no OpenCL device present"
      ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache;CLGRAD_KERNEL_DIR=${dir};CLGRAD_KERNEL_SHAPE=row=${shape};CLGRAD_ROWS16=0")
  endforeach()
endfunction()

# log(s) off by 1e-6, 2 to 4 times the 16-bit tolerance near 0 on rows of 3: the rows' maxima
# (outputs near 0) of the large-logit cases differ
clg_seed_mutant(log_softmax_near_zero softmax.cl log_softmax
  "log_softmax \\[9x3 rows large logits\\][^\n]*bf16 on [^\n]*results differ"
  " - m - k" " - m - (k + 1e-6f)" " - m - ls" " - m - (ls + 1e-6f)")
# x - (m + log(s)), the order PyTorch avoids: the logits at 1e4 fail (float32, 8e-9 > 1e-11)
clg_seed_mutant(log_softmax_order softmax.cl log_softmax
  "log_softmax \\[[^\n]*rows logits 1e4\\] contig on [^\n]*normalized error"
  " - m - k" " - (m + k)" " - m - ls" " - (m + ls)")
# the row's target sum one element short: (C u)^2, the threshold of rows of 4097, still catches it
# (the strings hold no semicolon: CMake would split them)
clg_seed_mutant(xent_backward_short_sum fused.cl softmax_xent_backward
  "softmax_xent_backward \\[2x4097 rows\\] contig on [^\n]*normalized error"
  "ts += XLOAD(t, ot + j * g.cs[2])" "ts += j == g.C - 1 ? (ACC)0 : XLOAD(t, ot + j * g.cs[2])"
  "ts += XLOAD(t, AT(2, n, j))" "ts += j == g.C - 1 ? (ACC)0 : XLOAD(t, AT(2, n, j))")
