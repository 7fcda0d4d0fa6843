# `clgrad train --model gfnet`: train, save, stop, resume and eval on 600 Fashion-MNIST samples
# (tests/test_train_gfnet.sh). The 2-D FFTs it uses: tests/fft2.cmake; one block's gradient:
# test_grad --case gfnet_block.
add_test(NAME test_train_gfnet COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_train_gfnet.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_train_gfnet PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
