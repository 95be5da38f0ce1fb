#pragma once
// A scenario is everything the user can set: inputs, weights, mask, settings,
// pins and file metadata. The engine computes every stage from it; nothing in
// here is derived.

#include "attention_lab/loss.h"
#include "attention_lab/matrix.h"
#include "attention_lab/shared_matrix.h"
#include "attention_lab/stage_id.h"
#include "attention_lab/symbol_names.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attention_lab {

// None: every key; Causal: keys 0…i; Window: the last `window` keys up to i
// (i − window < j ≤ i, a sliding window); Custom: the user's 0/1 matrix.
enum class MaskKind { None, Causal, Window, Custom };

const char* to_string(MaskKind kind);

// Which dimensions RoPE turns together: Half pairs i and i + d_k/2 (HF
// Llama's rotate_half, the default), Interleaved pairs 2i and 2i + 1 (GPT-J,
// the RoFormer paper).
enum class RopePairs { Half, Interleaved };

const char* to_string(RopePairs pairs);

// Rotary position embedding (Su et al. 2021): before QKᵀ, each head's query
// and key of the token at position p turn pair k of their dimensions by the
// angle p·θ^(−2k/d_k), so their dot product depends on how far apart they are.
//
// A checkpoint trained for a longer context may stretch the frequencies
// θ^(−2k/d_k) (HF's "rope_type"): Linear divides every one by `factor`;
// Llama3 (Llama 3.1 and later) divides those whose wavelength 2π/ω is over
// original_max_positions / low_freq_factor, keeps those under
// original_max_positions / high_freq_factor and blends the ones between.
enum class RopeScaling { None, Linear, Llama3 };

const char* to_string(RopeScaling scaling);

struct Rope {
  bool on = false;
  float theta = 10000.0f;
  RopePairs pairs = RopePairs::Half;
  RopeScaling scaling = RopeScaling::None;
  float factor = 1.0f;                // Linear and Llama3
  float low_freq_factor = 1.0f;       // Llama3
  float high_freq_factor = 4.0f;      // Llama3
  int original_max_positions = 8192;  // Llama3: the context the model was first trained for
  // How many of each head's dimensions turn (0: all d_k). GPT-NeoX/Pythia
  // turns only the first rotary_pct·d_k; the others pass unchanged, and the
  // frequencies are those of a head that wide: θ^(−2k/dims).
  int dims = 0;
  friend bool operator==(const Rope&, const Rope&) = default;
};

// The dimensions of a head RoPE turns: rope.dims, or all d_k.
int rotary_width(const Rope& rope, int d_k);

// The first thing wrong with a RoPE setting (θ, the scaling's numbers), named
// as `where`.theta, `where`.scaling.factor …, or an empty string.
std::string check_rope(const Rope& rope, const std::string& where = "rope");

// An RMSNorm of the queries and the keys after their projection, before RoPE
// (x / √(mean(x²) + ε) · g): PerHead normalises each head's d_k values with one
// d_k-wide gain shared by every head (Qwen3, Gemma 3), Whole normalises the
// whole projection row with a gain as wide as it (OLMo-2).
enum class QkNormScope { Off, PerHead, Whole };

const char* to_string(QkNormScope scope);

struct QkNorm {
  QkNormScope scope = QkNormScope::Off;
  float eps = 1e-6f;
  bool on() const { return scope != QkNormScope::Off; }
  friend bool operator==(const QkNorm&, const QkNorm&) = default;
};

// The dimensions a scenario implies. d_out is the width of the output:
// columns of W_o when W_o is on, h·d_v otherwise.
struct Dims {
  int T = 0;
  int d_model = 0;
  int heads = 0;
  int d_k = 0;
  int d_v = 0;
  int d_out = 0;
  int kv_heads = 0;  // heads of K and V (grouped-query attention); = heads without grouping
  // Cross-attention: keys and values come from X_kv (T_k rows of d_kv); in
  // self-attention T_k = T and d_kv = d_model.
  int T_k = 0;
  int d_kv = 0;
  // The q/k norm's gains span every head (QkNormScope::Whole), not one head's d_k.
  bool qk_norm_whole = false;
  // The dimensions of a head RoPE turns, when only some do (partial rotary); 0: all d_k.
  int rotary = 0;
  int rotary_dims() const { return rotary > 0 ? rotary : d_k; }

  // The K/V head query head h reads: ⌊h·kv_heads/heads⌋ (h itself without grouping).
  int kv_head(int h) const { return heads > 0 ? h * kv_heads / heads : 0; }

  friend bool operator==(const Dims&, const Dims&) = default;
};

// One overridden cell of an intermediate stage ("what if this score were 5?").
struct PinKey {
  StageId stage;
  int row = 0;
  int col = 0;
  friend auto operator<=>(const PinKey&, const PinKey&) = default;
};

struct Scenario {
  std::string title;
  std::string description;
  std::vector<std::string> tokens;  // T labels; empty entries are shown as the index
  // d_model names of X's columns (the features: "noun", "plural"…), also the
  // rows of W_q, W_k and W_v. Empty list = none; empty entries show the index.
  std::vector<std::string> features;

  SharedMatrix X;     // T × d_model
  // Cross-attention (seed 002: decoder queries over encoder keys and values):
  // K and V are projected from X_kv (T_k × d_kv), Q from X. Empty: self-attention.
  SharedMatrix X_kv;
  std::vector<std::string> tokens_kv;  // T_k labels of X_kv's rows (as tokens)
  SharedMatrix W_q;   // d_model × h·d_k
  SharedMatrix W_k;   // d_kv × kv·d_k (kv = kv_heads, or h without grouping; d_kv = d_model without X_kv)
  SharedMatrix W_v;   // d_kv × kv·d_v
  SharedMatrix W_o;   // h·d_v × d_out, used only when use_w_o
  // Biases are 1 × width rows so they edit like any other matrix.
  SharedMatrix b_q, b_k, b_v;  // used only when use_bias
  SharedMatrix b_o;            // 1 × d_out, used only when use_output_bias

  int heads = 1;
  // Grouped-query attention (Ainslie et al. 2023): K and V have this many
  // heads, each shared by heads/kv_heads query heads (1 = multi-query).
  // 0 = one per query head, plain multi-head attention.
  int kv_heads = 0;
  MaskKind mask_kind = MaskKind::None;
  SharedMatrix custom_mask;  // T × T_k of 0/1 (1 = may attend); kept even when another kind is active
  int window = 0;      // keys a query sees with MaskKind::Window (≥ 1); kept like custom_mask
  bool scale = true;
  // > 0: with `scale`, the scores are multiplied by this instead of divided
  // by √d_k (Granite's attention_multiplier, Gemma's query_pre_attn_scalar^−½).
  float score_scale = 0.0f;
  // > 0: the scaled scores are soft-capped, c·tanh(s/c), before the mask
  // (Gemma 2's attn_logit_softcapping): no score can pass ±c.
  float softcap = 0.0f;
  float temperature = 1.0f;
  bool use_bias = false;
  bool use_w_o = false;
  bool use_output_bias = false;
  // ALiBi (Press et al. 2022): each head adds m_h·(j − i) to its scaled scores
  // before the mask, m_h from alibi_slopes(); no position is put into X.
  bool alibi = false;
  Rope rope;  // needs an even d_k
  // Attention sinks (as in gpt-oss): one learned logit per head that joins
  // every softmax row and takes its share of the weight, which is then
  // dropped, so rows sum to less than 1. 1 × heads, used only when use_sinks.
  SharedMatrix sinks;
  bool use_sinks = false;
  // q/k norm: its gains, 1 × d_k (PerHead) or as wide as Q and K (Whole).
  QkNorm qk_norm;
  SharedMatrix q_norm, k_norm;

  // The letters the app shows for its symbols ({"S": "ω"}: symbol_names.h);
  // empty: ours.
  SymbolNames symbols;
  // The number the app shows for the first row, column and head: 0 as in code,
  // or 1 as in most textbooks (x₁ … x_T). Only what is shown; stage ids and
  // cell addresses in files always count from 0.
  int index_base = 0;

  // What the numbers should have been, for the gradients (gradients.h); none: no loss.
  std::optional<Loss> loss;

  // Seed of the generator that fills cells a dimension change creates.
  std::uint64_t seed = 0x5eedULL;

  std::map<PinKey, float> pins;

  // Top-level keys of the file we did not recognise, kept verbatim (serialised
  // JSON) so saving never drops what another tool or a newer version wrote.
  std::vector<std::pair<std::string, std::string>> unknown_fields;

  // Every matrix the scenario holds (each a copy-on-write buffer).
  std::array<const SharedMatrix*, 14> matrices() const {
    return {&X, &X_kv, &W_q, &W_k, &W_v, &W_o, &b_q, &b_k, &b_v, &b_o, &custom_mask, &sinks, &q_norm, &k_norm};
  }

  Dims dims() const;
  int T() const { return static_cast<int>(X.rows()); }
  int d_model() const { return static_cast<int>(X.cols()); }
  bool cross() const { return X_kv.size() > 0; }
  // What K and V are projected from: X_kv with cross-attention, else X.
  const SharedMatrix& kv_source() const { return cross() ? X_kv : X; }
  // The label of key token t (of X_kv with cross-attention, else of X).
  std::string key_label(int t) const;
  // The number of K/V heads actually used (heads without grouping).
  int kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }

  // Index i as shown ("2", or "3" counting from 1), and as a subscript ("₂").
  std::string shown_index(int i) const;
  std::string shown_subscript(int i) const;

  // The label of token t, falling back to "t<index>".
  std::string token_label(int t) const;
  // The name of feature (column of X) i, falling back to the index "<i>".
  std::string feature_label(int i) const;

  // The mask actually applied: 1 where query row may attend to key column.
  Matrix effective_mask() const;
  // One cell of it, without building the T × T matrix.
  bool mask_allows(int row, int col) const;
};

// ALiBi's slope of each of `heads` heads: 2^(−8(h+1)/n) for n a power of two;
// otherwise those of the largest power of two below n, then every other slope
// of twice that power (the paper's rule, as in its reference code and HF).
std::vector<double> alibi_slopes(int heads);

// (Below, d_k is the width RoPE turns: rotary_width(rope, d_k) of a head.)
// RoPE's frequency of pair k (0 ≤ k < d_k/2): θ^(−2k/d_k), scaled as the
// Rope says (HF's _compute_llama3_parameters and linear scaling), in double.
double rope_frequency(const Rope& rope, int d_k, int pair);
// Pair k's frequency as a formula: "θ^(−4/16)", scaled "θ^(−4/16) ÷ 32" or
// blended "(0.33 + 0.67/32)·θ^(−2/16)".
std::string rope_frequency_formula(const Rope& rope, int d_k, int pair);
// Why the scaling did that to pair k, in words ("Llama 3 scaling: its
// wavelength 165 is over 64"), or an empty string without scaling.
std::string rope_scaling_note(const Rope& rope, int d_k, int pair);
// RoPE's angle of pair k at `position`: position·rope_frequency(k).
double rope_angle(const Rope& rope, int d_k, int pair, int position);
// The two dimensions of a head that pair k turns together.
std::pair<int, int> rope_pair(RopePairs pairs, int d_k, int pair);
// The dimension of a head (0 ≤ dim < d_k) that RoPE turns together with `dim`,
// and the pair they form; a dimension past the turned ones (partial rotary)
// is its own partner and in no pair (−1).
int rope_partner(RopePairs pairs, int d_k, int dim);
int rope_pair_of(RopePairs pairs, int d_k, int dim);

// What the scores are divided by before the mask: √d_k when `scale` is on
// (else 1), times the temperature; in double, as the engine rounds it once.
// The one place that knows the scaling's arithmetic.
double score_scale_divisor(const Scenario& s);  // √d_k, 1/score_scale, or 1
// "√16", "1/0.0625" or "1": the divisor score_scale_divisor gives, as written in formulas.
std::string score_scale_text(const Scenario& s);
double score_divisor(const Scenario& s);        // score_scale_divisor · τ

// Checks every shape and value of a scenario built in memory; returns the
// first problem as a user-readable message, or an empty string.
std::string validate(const Scenario& scenario);

}  // namespace attention_lab
