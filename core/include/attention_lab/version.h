#pragma once

namespace attention_lab {
// Set by CMake from project(VERSION …).
const char* version();
}  // namespace attention_lab
