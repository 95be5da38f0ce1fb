#pragma once
// A batch of prompts, as interpretability work runs them: a text file with
// one prompt a line (or, for patching, a clean and a corrupted prompt a
// line, separated by a tab, and optionally the answer and wrong tokens), and the means of what each prompt gives — head
// detector scores, direct logit attributions, patching sweeps — with the
// per-prompt values kept beside them.
//
// The file is refused by line: an empty line, a prompt the tokenizer or the
// model cannot take, a pair whose two prompts differ in length, a batch that
// must be of one length and is not. Each message names the line.

#include "attention_lab/activation_patching.h"
#include "attention_lab/head_detectors.h"
#include "attention_lab/logit_attribution.h"
#include "attention_lab/tokenizer.h"

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace attention_lab {

struct Prompt {
  int line = 0;  // in the file, from 1
  std::string text;
  std::vector<int> ids;
  // Pairs only: the corrupted prompt, of as many tokens as `ids`.
  std::string corrupted_text;
  std::vector<int> corrupted_ids;
  // Pairs only, optional third and fourth fields: the answer token and the
  // wrong one (single tokens), −1 where not given.
  int answer = -1, wrong = -1;
};

enum class PromptLayout {
  Single,  // one prompt a line; lengths may differ
  OneLength,  // one prompt a line, all of one length (a tensor batch)
  Pairs,   // "clean<TAB>corrupted[<TAB>answer[<TAB>wrong]]" a line; each pair of one length
};

// Reads `content` (the file's text; "\r\n" line ends allowed). `name` names
// the file in messages. Returns "" or the first problem; at most `most`
// prompts (the rest refused by count, not dropped).
std::string read_prompts(std::string_view content, const std::string& name, const Tokenizer& tokenizer,
                         const ModelConfig& config, PromptLayout layout, std::vector<Prompt>& out, int most = 4096);

// Every prompt's head detector scores, their mean and, where the prompts are
// all of one length of at most kMeanPatternTokens, every head's attention
// pattern averaged over them (at l·heads + h). `progress(done, total)` after
// each prompt; returning false stops (`complete` false, the means of those
// done). Prompts of fewer than two tokens are refused (invalid_argument).
inline constexpr int kMeanPatternTokens = 256;
struct BatchHeads {
  std::vector<HeadScores> each;
  HeadScores mean;
  std::vector<Matrix> mean_patterns;
  bool complete = true;
};
BatchHeads detect_heads_over(const TransformerModel& model, std::span<const Prompt> prompts,
                             const std::function<bool(int done, int total)>& progress = {});

// Element-wise means. All of one model; `parts` not empty.
HeadScores mean_head_scores(std::span<const HeadScores> parts);
// The mean of attributions of each prompt's own row and token: `row` and
// `token` of the result are those of the first (they differ per prompt).
LogitAttribution mean_attribution(std::span<const LogitAttribution> parts);
// The mean metric of each patched run, and of the clean and corrupted runs,
// so that the normalised mean is (mean patched − mean corrupted) /
// (mean clean − mean corrupted), as TransformerLens's batched metrics do.
PatchSweep mean_sweep(std::span<const PatchSweep> parts);

}  // namespace attention_lab
