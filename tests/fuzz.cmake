# Fuzz targets of the file readers (tests/fuzz/): IDX, CSV, safetensors, CIFAR-10, plain text, the
# checkpoint loader, the tune file, the program-cache entry and the tokenizers (serialised, learned).
# - In every build: replay_<reader> runs the target over the committed seed corpus
#   (tests/fuzz/corpus/<reader>), crafted well-formed and malformed files; with CLGRAD_SANITIZE=ON
#   under ASan and UBSan, which stop at the first error.
# - With -DCLGRAD_FUZZ=ON (clang, and CLGRAD_SANITIZE=ON): libFuzzer binaries fuzz_<reader>, e.g.
#     build/tests/fuzz_idx -max_total_time=600 -max_len=4096 -malloc_limit_mb=64 build/tests/fuzz-corpus-idx
#   (the build folder's copy of the corpus, which libFuzzer grows), and a 20-second ctest of each.
option(CLGRAD_FUZZ "Build libFuzzer targets of the file readers (clang; needs CLGRAD_SANITIZE=ON)" OFF)
set(CLG_FUZZ_READERS idx csv safetensors cifar text checkpoint tune progcache tokenizer)
# inputs of each seed corpus, and how many the reader accepts (the rest must fail cleanly)
set(CLG_FUZZ_SEEDS_idx "14 input\\(s\\) ran, 5 accepted")
set(CLG_FUZZ_SEEDS_csv "10 input\\(s\\) ran, 4 accepted")
set(CLG_FUZZ_SEEDS_safetensors "16 input\\(s\\) ran, 7 accepted")
set(CLG_FUZZ_SEEDS_cifar "8 input\\(s\\) ran, 3 accepted")
set(CLG_FUZZ_SEEDS_text "7 input\\(s\\) ran, 4 accepted")
set(CLG_FUZZ_SEEDS_checkpoint "12 input\\(s\\) ran, 3 accepted")
set(CLG_FUZZ_SEEDS_tune "10 input\\(s\\) ran, 3 accepted")
set(CLG_FUZZ_SEEDS_progcache "8 input\\(s\\) ran, 2 accepted")
set(CLG_FUZZ_SEEDS_tokenizer "9 input\\(s\\) ran, 5 accepted")
# the largest input libFuzzer makes (the seeds of CIFAR-10 and checkpoints are larger than 4096)
set(CLG_FUZZ_MAXLEN_cifar 16384)
set(CLG_FUZZ_MAXLEN_checkpoint 16384)
# the tune file's and the program cache's parsers are internal to the OpenCL backend
set(CLG_FUZZ_INTERNAL tune progcache)
foreach(reader ${CLG_FUZZ_READERS})
  add_executable(replay_${reader} fuzz/fuzz_${reader}.c fuzz/fuzz_file.c fuzz/replay.c)
  target_link_libraries(replay_${reader} PRIVATE clgrad)
  if(reader IN_LIST CLG_FUZZ_INTERNAL)
    target_include_directories(replay_${reader} PRIVATE ${CMAKE_SOURCE_DIR}/backend/opencl)
  endif()
  add_test(NAME test_fuzz_replay_${reader}
    COMMAND replay_${reader} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${reader})
  set_tests_properties(test_fuzz_replay_${reader} PROPERTIES TIMEOUT 120
    PASS_REGULAR_EXPRESSION "${CLG_FUZZ_SEEDS_${reader}}"
    ENVIRONMENT "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=detect_leaks=1")
endforeach()
if(CLGRAD_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang" OR NOT CLGRAD_SANITIZE)
    message(FATAL_ERROR "CLGRAD_FUZZ=ON needs clang and the sanitizers: "
      "cmake -B build-fuzz -DCMAKE_C_COMPILER=clang -DCLGRAD_SANITIZE=ON -DCLGRAD_FUZZ=ON")
  endif()
  target_compile_options(clgrad PRIVATE -fsanitize=fuzzer-no-link) # coverage of the readers
  foreach(reader ${CLG_FUZZ_READERS})
    add_executable(fuzz_${reader} fuzz/fuzz_${reader}.c fuzz/fuzz_file.c)
    target_compile_options(fuzz_${reader} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${reader} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_${reader} PRIVATE clgrad)
    if(reader IN_LIST CLG_FUZZ_INTERNAL)
      target_include_directories(fuzz_${reader} PRIVATE ${CMAKE_SOURCE_DIR}/backend/opencl)
    endif()
    file(COPY ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${reader}/ DESTINATION ${CMAKE_CURRENT_BINARY_DIR}/fuzz-corpus-${reader})
    set(maxlen 4096)
    if(DEFINED CLG_FUZZ_MAXLEN_${reader})
      set(maxlen ${CLG_FUZZ_MAXLEN_${reader}})
    endif()
    add_test(NAME test_fuzz_${reader}
      COMMAND fuzz_${reader} -max_total_time=20 -max_len=${maxlen} -malloc_limit_mb=64 ${CMAKE_CURRENT_BINARY_DIR}/fuzz-corpus-${reader})
    set_tests_properties(test_fuzz_${reader} PROPERTIES TIMEOUT 120 ENVIRONMENT "UBSAN_OPTIONS=halt_on_error=1")
  endforeach()
endif()
