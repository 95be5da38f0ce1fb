#pragma once
// libsentencepiece trusts a model's normalization rules: the
// precompiled_charsmap, a double-array trie (darts-clone) over the input's
// bytes whose leaves point into a table of replacement strings. A file whose
// trie points outside itself, or whose replacements run off the end, makes
// Encode read memory that is not there (found by fuzz/targets/sentencepiece).
// This walks every path the trie can take, as darts-clone's
// commonPrefixSearch would, before the library ever sees the file.

#include <string>
#include <string_view>

namespace attention_lab {

// "" when every precompiled_charsmap in the serialized ModelProto (of its
// normalizer_spec and denormalizer_spec) is safe to use; else what is wrong
// ("normalizer_spec.precompiled_charsmap: the trie's node 1234 points to unit
// 70000 of 512"). A file this reader cannot read as protobuf is refused too.
std::string sentencepiece_charsmap_problem(std::string_view model_bytes);

// One charsmap blob: a little-endian uint32 trie size, the trie, then the
// replacement strings (each ending in a NUL).
std::string charsmap_problem(std::string_view blob);

}  // namespace attention_lab
