#pragma once
// A linked GLSL program; compile and link errors are reported with the file
// name and line so a broken shader is easy to find.

#include <glad/gl.h>

#include <string>

namespace attention_lab::gfx {

class ShaderProgram {
 public:
  ShaderProgram() = default;
  ~ShaderProgram();
  ShaderProgram(const ShaderProgram&) = delete;
  ShaderProgram& operator=(const ShaderProgram&) = delete;

  // Builds from the embedded shaders/ files; returns "" or the error text.
  std::string build(const char* vertex_file, const char* fragment_file);
  GLuint id() const { return id_; }
  GLint uniform(const char* name) const { return glGetUniformLocation(id_, name); }

 private:
  GLuint id_ = 0;
};

}  // namespace attention_lab::gfx
