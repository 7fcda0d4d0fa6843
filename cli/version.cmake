# `clgrad --version` prints the project's version (cli/opts.c).
target_compile_definitions(clgrad_cli PRIVATE CLGRAD_VERSION="${PROJECT_VERSION}")
