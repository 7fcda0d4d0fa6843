# Tokenizers (frontend/clgrad_tokenizer.h): round trips of every kind on random bytes and text,
# the serialised form, malformed forms, BPE against a slow reference learner. Host only, seconds.
clg_test(test_tokenizer)
# test_progress: the CLI's rates to three significant digits (cli/progress.c), host only.
add_executable(test_progress ${CMAKE_SOURCE_DIR}/tests/test_progress.c ${CMAKE_SOURCE_DIR}/cli/progress.c)
target_include_directories(test_progress PRIVATE ${CMAKE_SOURCE_DIR}/cli)
target_link_libraries(test_progress PRIVATE clg_testutil m)
add_test(NAME test_progress COMMAND test_progress)
# A language model's checkpoint: tokenizer, data fingerprint and path stored; eval and --resume
# refuse another model configuration, tokenizer or (resume) text with one line each; an old
# checkpoint still loads; clgrad tokenize. The reference backend, a tiny transformer: seconds.
add_test(NAME test_lm_ckpt COMMAND bash ${CMAKE_SOURCE_DIR}/tests/test_lm_ckpt.sh $<TARGET_FILE:clgrad_cli>)
set_tests_properties(test_lm_ckpt PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
  ENVIRONMENT "CLGRAD_SELFTEST=0;CLGRAD_CACHE_DIR=${CMAKE_BINARY_DIR}/test-cache")
