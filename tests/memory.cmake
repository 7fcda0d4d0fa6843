# Peak device memory: the allocator's high-water mark and its reset, the trainer's peak a step in
# float32 and mixed precision (tests/test_memory_peak.c), on the reference and every device.
clg_test(test_memory_peak)
# Activation checkpointing: the transformer's gradients with --recompute equal those without and
# its activations a step fall >= 2x; dropout replays its masks (tests/test_recompute.c).
clg_test(test_recompute)
# Gradient accumulation: micro-batches with their losses weighted by their rows equal one large
# batch, a partial last step included (tests/test_accum.c).
clg_test(test_accum)
# The memory check before the first step: the estimate against the measured peak, a configuration
# that cannot fit refused with its size and what to change (tests/test_memory_fit.c).
clg_test(test_memory_fit)
# train --recompute --accum-steps end to end (the transformer and gpt), and the option's range
add_test(NAME test_train_memory_cli COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_train_memory_cli.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_train_memory_cli PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
  ENVIRONMENT "CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
