# ASan + UBSan for the `asan` preset: applied to every target we build.
# -O1, as the ASan documentation advises: Eigen at -O0 made the sanitizer test
# run several times slower, and the Debug build keeps its assertions. -O1
# everywhere: test code at -O0 compiled in a third of the time but made the
# library slower too (the linker keeps one copy of each Eigen template, the
# test's unoptimized one: the random-edit tests ran 7× longer). -g1: line
# tables, all a sanitizer's report needs, in two thirds of the compile time
# of full debug information (measured: 92 s → 66 s a test batch).
if(ATTENTION_LAB_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1 -g1)
  add_link_options(-fsanitize=address,undefined)
endif()

# The `fuzz` preset (clang only): every target gets libFuzzer's coverage
# instrumentation plus ASan and UBSan; only the fuzz executables link the
# libFuzzer driver (fuzz/CMakeLists.txt).
if(ATTENTION_LAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ATTENTION_LAB_FUZZ needs clang (libFuzzer); use the `fuzz` preset or scripts/fuzz")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
