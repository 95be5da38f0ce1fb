# Warnings live on an interface target so third-party code is never compiled with them.
add_library(attention_lab_warnings INTERFACE)
add_library(attention_lab::warnings ALIAS attention_lab_warnings)
target_compile_options(attention_lab_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion
    -Wsign-conversion -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wunused
    -Woverloaded-virtual -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough>
  # GCC 12 reports a false -Wrestrict inside std::string operator+ at -O3 (GCC bug 105329).
  $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
