# `clgrad train --model gfnet`: train, save, stop, resume and eval on 600 Fashion-MNIST samples
# (tests/test_train_gfnet.sh). The 2-D FFTs it uses: tests/fft2.cmake; one block's gradient:
# test_grad --case gfnet_block.
clg_env_test(test_train_gfnet 600 "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache"
  bash ${CMAKE_SOURCE_DIR}/tests/test_train_gfnet.sh $<TARGET_FILE:clgrad_cli>)
