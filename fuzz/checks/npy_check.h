#pragma once
// The npy fuzz target's check (fuzz/targets/npy.cpp), shared with the unit
// tests (tests/core/fuzz_corpus_test.cpp runs the committed seeds and
// regression inputs through it). Returns "" when the input behaved, or what
// went wrong.
//
// The input is a .npy file, imported with import_npy_bytes (weight_import.h)
// onto the "fat-cat" preset twice: as W_q, and transposed as W_o. "Behaved":
// refused with a short one-line message starting with the file's name, or a
// scenario that validate() accepts, with one imported line, whose every stage
// the engine computes in the shape stage_shape says, and whose output holds
// no NaN or infinity when the imported values are of moderate size (|v| ≤
// 1e15, far from float's overflow in the products that follow).

#include <string>
#include <string_view>

namespace attention_lab::fuzz {

std::string check_npy_import(std::string_view bytes);

}  // namespace attention_lab::fuzz
