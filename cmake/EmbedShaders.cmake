# cmake -DOUT=file.cpp -DFILES="a.vert;b.frag" -P EmbedShaders.cmake
# Writes a table {file name, source text} the app compiles at start-up.
set(body "")
foreach(f ${FILES})
  file(READ ${f} text)
  get_filename_component(name ${f} NAME)
  set(body "${body}  {\"${name}\", R\"glsl(${text})glsl\"},\n")
endforeach()
file(WRITE ${OUT} "// Generated from shaders/ by cmake/EmbedShaders.cmake. Do not edit.\n#include \"gfx/embedded_shaders.h\"\n\nnamespace attention_lab::gfx {\nconst EmbeddedShader kEmbeddedShaders[] = {\n${body}  {nullptr, nullptr}};\n}  // namespace attention_lab::gfx\n")
