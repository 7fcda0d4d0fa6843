# test_json_read: the CLI's JSON reader over cJSON (compare/json_read.c), without a device.
add_executable(test_json_read ${CMAKE_SOURCE_DIR}/tests/test_json_read.c
  ${CMAKE_SOURCE_DIR}/compare/json_read.c ${CMAKE_SOURCE_DIR}/compare/json_write.c)
target_include_directories(test_json_read PRIVATE ${CMAKE_SOURCE_DIR}/compare ${CJSON_INCLUDE})
target_link_libraries(test_json_read PRIVATE clg_testutil m ${CJSON_LIB})
add_test(NAME test_json_read COMMAND test_json_read)
