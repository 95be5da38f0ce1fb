#include "attention_lab/prompt_batch.h"

#include "attention_lab/transformer_forward.h"

#include <stdexcept>

namespace attention_lab {

namespace {

bool blank(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

// One prompt's ids, or why not (in the words of the tokenizer or check_ids).
std::string encode(const Tokenizer& t, const ModelConfig& c, const std::string& text, std::vector<int>& ids) {
  Encoded e = t.encode(text);
  if (e.error.empty()) e.error = check_ids(c, e.ids);
  if (e.error.empty() && e.ids.empty()) e.error = "no tokens";
  ids = std::move(e.ids);
  return e.error;
}

}  // namespace

std::string read_prompts(std::string_view content, const std::string& name, const Tokenizer& tokenizer,
                         const ModelConfig& config, PromptLayout layout, std::vector<Prompt>& out, int most) {
  out.clear();
  int n = 0;
  for (std::size_t at = 0; at < content.size();) {
    const std::size_t end = std::min(content.find('\n', at), content.size());
    std::string_view line = content.substr(at, end - at);
    at = end + 1;
    ++n;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = name + " line " + std::to_string(n);
    if (blank(line)) {
      return where + " is empty: expected " +
             (layout == PromptLayout::Pairs ? "a clean and a corrupted prompt (tab between)" : "a prompt") +
             " on every line";
    }
    if (static_cast<int>(out.size()) == most)
      return name + " has more than " + std::to_string(most) + " prompts: expected at most " + std::to_string(most);
    Prompt p;
    p.line = n;
    if (layout == PromptLayout::Pairs) {
      std::vector<std::string> fields;
      for (std::size_t from = 0;;) {
        const std::size_t tab = line.find('\t', from);
        fields.emplace_back(line.substr(from, tab == std::string_view::npos ? std::string_view::npos : tab - from));
        if (tab == std::string_view::npos) break;
        from = tab + 1;
      }
      if (fields.size() < 2 || fields.size() > 4)
        return where + ": expected clean<TAB>corrupted, optionally <TAB>answer<TAB>wrong (2 to 4 fields), found " +
               std::to_string(fields.size()) + (fields.size() == 1 ? " (no tab)" : "");
      p.text = fields[0];
      p.corrupted_text = fields[1];
      const std::pair<const char*, int*> tokens[] = {{"answer", &p.answer}, {"wrong", &p.wrong}};
      for (std::size_t i = 2; i < fields.size(); ++i)
        if (std::string e = tokenizer.single_token(fields[i], *tokens[i - 2].second); !e.empty())
          return where + ", the " + tokens[i - 2].first + " " + e;
      if (blank(p.text)) return where + ": the clean prompt (before the tab) is empty";
      if (blank(p.corrupted_text)) return where + ": the corrupted prompt (after the tab) is empty";
      if (std::string e = encode(tokenizer, config, p.text, p.ids); !e.empty()) return where + ", clean: " + e;
      if (std::string e = encode(tokenizer, config, p.corrupted_text, p.corrupted_ids); !e.empty())
        return where + ", corrupted: " + e;
      if (p.ids.size() != p.corrupted_ids.size())
        return where + ": the clean prompt has " + std::to_string(p.ids.size()) + " tokens and the corrupted one " +
               std::to_string(p.corrupted_ids.size()) + ": a pair needs the same number";
    } else {
      p.text = std::string(line);
      if (std::string e = encode(tokenizer, config, p.text, p.ids); !e.empty()) return where + ": " + e;
      if (layout == PromptLayout::OneLength && !out.empty() && p.ids.size() != out[0].ids.size())
        return where + " has " + std::to_string(p.ids.size()) + " tokens and line " + std::to_string(out[0].line) +
               " has " + std::to_string(out[0].ids.size()) + ": a batch needs prompts of one length";
    }
    out.push_back(std::move(p));
  }
  if (out.empty()) return name + " has no prompts";
  return {};
}

BatchHeads detect_heads_over(const TransformerModel& model, std::span<const Prompt> prompts,
                             const std::function<bool(int done, int total)>& progress) {
  if (prompts.empty()) throw std::invalid_argument("detect_heads_over: no prompts");
  const std::size_t T = prompts[0].ids.size();
  bool patterns = T <= static_cast<std::size_t>(kMeanPatternTokens);
  for (const Prompt& p : prompts) patterns = patterns && p.ids.size() == T;
  BatchHeads out;
  std::vector<Matrix> sum;
  for (const Prompt& p : prompts) {
    if (p.ids.size() < 2)
      throw std::invalid_argument("line " + std::to_string(p.line) + ": expected at least 2 tokens, found " +
                                  std::to_string(p.ids.size()));
    std::vector<Matrix> weights;
    out.each.push_back(detect_heads(model, p.ids, patterns ? &weights : nullptr));
    if (patterns && sum.empty()) sum = std::move(weights);
    else
      for (std::size_t i = 0; i < weights.size(); ++i) sum[i] += weights[i];
    if (progress && !progress(static_cast<int>(out.each.size()), static_cast<int>(prompts.size()))) {
      out.complete = out.each.size() == prompts.size();
      break;
    }
  }
  out.mean = mean_head_scores(out.each);
  for (Matrix& m : sum) m /= static_cast<float>(out.each.size());
  out.mean_patterns = std::move(sum);
  return out;
}

HeadScores mean_head_scores(std::span<const HeadScores> parts) {
  if (parts.empty()) throw std::invalid_argument("mean_head_scores: no prompts");
  HeadScores mean = parts[0];
  mean.ids.clear();
  for (std::size_t k = 0; k < mean.scores.size(); ++k) {
    Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(mean.scores[k].rows(), mean.scores[k].cols());
    for (const HeadScores& p : parts) sum += p.scores.at(k).cast<double>();
    mean.scores[k] = (sum / static_cast<double>(parts.size())).cast<float>();
  }
  return mean;
}

LogitAttribution mean_attribution(std::span<const LogitAttribution> parts) {
  if (parts.empty()) throw std::invalid_argument("mean_attribution: no prompts");
  LogitAttribution mean = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const LogitAttribution& p = parts[i];
    mean.logit += p.logit;
    mean.constant += p.constant;
    mean.embeddings += p.embeddings;
    mean.heads += p.heads;
    mean.attention_bias += p.attention_bias;
    mean.mlp += p.mlp;
  }
  const double n = static_cast<double>(parts.size());
  mean.logit /= n;
  mean.constant /= n;
  mean.embeddings /= n;
  mean.heads /= n;
  mean.attention_bias /= n;
  mean.mlp /= n;
  return mean;
}

PatchSweep mean_sweep(std::span<const PatchSweep> parts) {
  if (parts.empty()) throw std::invalid_argument("mean_sweep: no prompts");
  PatchSweep mean = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const PatchSweep& p = parts[i];
    if (p.kind != mean.kind || p.metric.rows() != mean.metric.rows() || p.heads != mean.heads)
      throw std::invalid_argument("mean_sweep: sweeps of different kinds or shapes");
    mean.clean += p.clean;
    mean.corrupted += p.corrupted;
    if (p.metric.cols() == mean.metric.cols()) mean.metric += p.metric;
    else throw std::invalid_argument("mean_sweep: sweeps over different numbers of positions");
  }
  const double n = static_cast<double>(parts.size());
  mean.clean /= n;
  mean.corrupted /= n;
  mean.metric /= n;
  return mean;
}

}  // namespace attention_lab
