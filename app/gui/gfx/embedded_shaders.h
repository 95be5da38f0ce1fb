#pragma once

namespace attention_lab::gfx {

struct EmbeddedShader {
  const char* file_name;  // "heatmap.frag"
  const char* source;
};

// Terminated by {nullptr, nullptr}; generated from shaders/ at build time.
extern const EmbeddedShader kEmbeddedShaders[];

}  // namespace attention_lab::gfx
