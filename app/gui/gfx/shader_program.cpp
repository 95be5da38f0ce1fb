#include "gfx/shader_program.h"

#include "gfx/embedded_shaders.h"

#include <cstring>
#include <vector>

namespace attention_lab::gfx {

namespace {

const char* find_source(const char* file) {
  for (const EmbeddedShader* s = kEmbeddedShaders; s->file_name; ++s)
    if (std::strcmp(s->file_name, file) == 0) return s->source;
  return nullptr;
}

// Mesa reports "0:12(3): error: …": prefix it with the file so it reads
// "shaders/heatmap.frag:12(3): error: …".
std::string with_file(const char* file, const std::string& log) {
  std::string out;
  std::size_t start = 0;
  while (start < log.size()) {
    auto end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(start, end - start);
    if (line.rfind("0:", 0) == 0) line = line.substr(2);
    if (!line.empty()) out += std::string("shaders/") + file + ":" + line + "\n";
    start = end + 1;
  }
  return out;
}

std::string compile(GLenum type, const char* file, GLuint& shader) {
  const char* src = find_source(file);
  if (!src) return std::string("shaders/") + file + ": not embedded in this build";
  shader = glCreateShader(type);
  glShaderSource(shader, 1, &src, nullptr);
  glCompileShader(shader);
  GLint ok = 0;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (ok) return {};
  GLint len = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &len);
  std::vector<char> log(static_cast<std::size_t>(len) + 1);
  glGetShaderInfoLog(shader, len, nullptr, log.data());
  return with_file(file, log.data());
}

}  // namespace

ShaderProgram::~ShaderProgram() {
  if (id_) glDeleteProgram(id_);
}

std::string ShaderProgram::build(const char* vertex_file, const char* fragment_file) {
  GLuint vs = 0, fs = 0;
  std::string err = compile(GL_VERTEX_SHADER, vertex_file, vs);
  if (err.empty()) err = compile(GL_FRAGMENT_SHADER, fragment_file, fs);
  if (err.empty()) {
    id_ = glCreateProgram();
    glAttachShader(id_, vs);
    glAttachShader(id_, fs);
    glLinkProgram(id_);
    GLint ok = 0;
    glGetProgramiv(id_, GL_LINK_STATUS, &ok);
    if (!ok) {
      char log[2048] = {};
      glGetProgramInfoLog(id_, sizeof log, nullptr, log);
      err = std::string("linking ") + vertex_file + " + " + fragment_file + ": " + log;
    }
  }
  if (vs) glDeleteShader(vs);
  if (fs) glDeleteShader(fs);
  return err;
}

}  // namespace attention_lab::gfx
