# ASan + UBSan for the `asan` preset: applied to every target we build.
# -O1, as the ASan documentation advises: Eigen at -O0 made the sanitizer test
# run several times slower, and the Debug build keeps its assertions.
if(ATTENTION_LAB_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1)
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
