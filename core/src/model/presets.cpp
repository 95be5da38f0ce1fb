#include "attention_lab/presets.h"

#include "attention_lab/excerpt.h"
#include "attention_lab/limits.h"
#include "attention_lab/seeded_fill.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <numbers>

namespace attention_lab {

namespace {

Matrix rows(std::initializer_list<std::initializer_list<float>> values) {
  const auto r = static_cast<Eigen::Index>(values.size());
  const auto c = static_cast<Eigen::Index>(values.begin()->size());
  Matrix m(r, c);
  Eigen::Index i = 0;
  for (const auto& row : values) {
    Eigen::Index j = 0;
    for (float v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

// "the fat cat sat on the mat": each embedding holds four hand-made features,
// [determiner, adjective, noun, relation word]. The weights make every query
// look for a feature another word class has:
//   determiners look for determiners, the adjective looks back at its
//   determiner, nouns look for adjectives, "sat"/"on" look for nouns.
// So "cat" attends to "fat" and "sat" to "cat", as the seed article describes.
Scenario fat_cat() {
  Scenario s;
  s.title = "the fat cat sat on the mat";
  s.description =
      "One head, causal mask, four hand-made features per word: determiner, adjective, noun, relation. "
      "Nouns look for adjectives, so 'cat' attends to 'fat'; 'sat' looks for a noun and finds 'cat'.";
  s.tokens = {"the", "fat", "cat", "sat", "on", "the", "mat"};
  s.X = rows({{0.9f, 0.1f, 0.0f, 0.1f},
              {0.0f, 1.0f, 0.2f, 0.0f},
              {0.1f, 0.1f, 1.0f, 0.0f},
              {0.0f, 0.0f, 0.2f, 1.0f},
              {0.1f, 0.0f, 0.0f, 0.8f},
              {1.0f, 0.0f, 0.1f, 0.1f},
              {0.0f, 0.2f, 0.9f, 0.1f}});
  // rows: features; columns: what the query seeks [det, adj, noun, relation]
  s.W_q = rows({{1.6f, 0.0f, 0.2f, 0.0f},
                {1.4f, 0.1f, 0.0f, 0.0f},
                {0.0f, 1.8f, 0.0f, 0.3f},
                {0.1f, 0.0f, 1.8f, 0.0f}});
  // columns: what the key offers [det, adj, noun, relation]
  s.W_k = rows({{1.5f, 0.0f, 0.0f, 0.1f},
                {0.0f, 1.6f, 0.1f, 0.0f},
                {0.1f, 0.0f, 1.5f, 0.0f},
                {0.0f, 0.1f, 0.0f, 1.2f}});
  s.W_v = rows({{0.8f, 0.1f, -0.2f, 0.0f},
                {-0.1f, 0.9f, 0.3f, 0.2f},
                {0.2f, -0.3f, 1.0f, 0.1f},
                {0.0f, 0.2f, -0.1f, 0.7f}});
  s.heads = 1;
  s.mask_kind = MaskKind::Causal;
  return s;
}

// Section 3.4 of "Build a Large Language Model (from Scratch)": six tokens with
// 3-d embeddings, W_query/W_key/W_value drawn by torch.manual_seed(123) and
// torch.rand(3, 2) in that order. No mask, no biases, no output projection.
Scenario book() {
  Scenario s;
  s.title = "Your journey starts with one step";
  s.description =
      "The worked example of the book 'Build a Large Language Model (from Scratch)': d_in = 3, d_out = 2, "
      "weights from torch.manual_seed(123). Query 2 ('journey') is the one the book follows.";
  s.tokens = {"Your", "journey", "starts", "with", "one", "step"};
  s.X = rows({{0.43f, 0.15f, 0.89f},
              {0.55f, 0.87f, 0.66f},
              {0.57f, 0.85f, 0.64f},
              {0.22f, 0.58f, 0.33f},
              {0.77f, 0.25f, 0.10f},
              {0.05f, 0.80f, 0.55f}});
  s.W_q = rows({{0.29611194f, 0.51656228f}, {0.25167072f, 0.68855679f}, {0.07397246f, 0.86652195f}});
  s.W_k = rows({{0.13657987f, 0.10247904f}, {0.18405646f, 0.72644675f}, {0.31525391f, 0.68710667f}});
  s.W_v = rows({{0.07563531f, 0.19663817f}, {0.31641197f, 0.40174013f}, {0.11856830f, 0.82739538f}});
  s.heads = 1;
  s.mask_kind = MaskKind::None;
  return s;
}

// The classic NaiveAttention module: one nn.Linear(n_embd, 3·n_embd) whose
// output is split into q, k, v, a causal mask and no output projection.
// Weights and input from torch.manual_seed(1), rounded to 4 decimals.
Scenario naive() {
  const Matrix W = rows({
      {0.2576f, -0.4707f, 0.0695f, 0.1826f, 0.0725f, -0.1862f, -0.1602f, -0.4888f, 0.33f, 0.4391f, 0.4906f, -0.2634f},
      {-0.2207f, 0.2999f, -0.0612f, -0.1949f, -0.002f, -0.302f, 0.0239f, 0.31f, -0.4556f, -0.0833f, -0.2115f, 0.257f},
      {-0.0969f, -0.1029f, 0.1387f, -0.0365f, 0.4371f, -0.0838f, 0.2981f, 0.1397f, -0.4754f, 0.214f, 0.375f, -0.2654f},
      {0.2347f, 0.2544f, 0.0247f, -0.045f, 0.1556f, -0.2157f, 0.2718f, 0.4743f, -0.2412f, -0.2324f, 0.0059f, 0.1471f},
  });
  const Matrix b = rows({{-0.1444f, -0.0548f, -0.4807f, -0.2384f, 0.2713f, -0.1215f, 0.498f, 0.4008f, -0.0234f,
                          -0.3337f, 0.3045f, 0.1552f}});
  Scenario s;
  s.title = "NaiveAttention (n_embd = 4, 5 tokens)";
  s.description =
      "The shape of the classic from-scratch PyTorch module: qkv = Linear(x) split into q, k, v, scores scaled "
      "by 1/sqrt(4), a causal mask, softmax, weights @ v. No output projection.";
  s.tokens = {"x0", "x1", "x2", "x3", "x4"};
  s.X = rows({{0.4533f, 1.1422f, 0.2486f, -1.7754f},
              {-0.5065f, 0.0998f, -0.654f, 0.7317f},
              {-1.4344f, -0.5008f, 0.1716f, -0.16f},
              {0.2546f, -0.502f, -1.0412f, 0.7323f},
              {-1.0483f, -0.4709f, 0.2911f, 1.9907f}});
  s.W_q = W.middleCols(0, 4);
  s.W_k = W.middleCols(4, 4);
  s.W_v = W.middleCols(8, 4);
  s.b_q = b.middleCols(0, 4);
  s.b_k = b.middleCols(4, 4);
  s.b_v = b.middleCols(8, 4);
  s.use_bias = true;
  s.heads = 1;
  s.mask_kind = MaskKind::Causal;
  return s;
}

// Four heads that each do one recognisable job, on "the animal didn't cross the
// street because it". X = [cos θt, sin θt, 1, first-token flag, 12 word features].
//   head 0 looks at the previous token (its query is the position rotated back one step);
//   head 1 looks at the first token (a common "sink" pattern in trained models);
//   head 2 lets the pronoun "it" find the nouns;
//   head 3 looks at the token itself and its close neighbours.
// W_o mixes the heads: mostly identity plus a little seeded noise.
// "the animal didn't cross the street because it" as multi_head and gqa see
// it: columns 0-1 a point on a circle, [cos θt, sin θt] (the position), 2 a
// constant 1, 3 "first token", 4-11 word features (det, noun, verb,
// negation, conj, pronoun, animate, place), 12-15 seeded noise.
constexpr int kAnimalT = 8, kAnimalD = 16;
constexpr float kAnimalTheta = std::numbers::pi_v<float> / 5.0f;

void animal_sentence(Scenario& s) {
  constexpr int T = kAnimalT, D = kAnimalD;
  s.tokens = {"the", "animal", "didn't", "cross", "the", "street", "because", "it"};
  const float words[T][8] = {{1, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 1, 0}, {0, 0, 1, 1, 0, 0, 0, 0},
                             {0, 0, 1, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 1},
                             {0, 0, 0, 0, 1, 0, 0, 0}, {0, 0, 0, 0, 0, 1, 1, 0}};
  s.X = Matrix::Zero(T, D);
  for (int t = 0; t < T; ++t) {
    s.X(t, 0) = std::cos(kAnimalTheta * static_cast<float>(t));
    s.X(t, 1) = std::sin(kAnimalTheta * static_cast<float>(t));
    s.X(t, 2) = 1.0f;
    s.X(t, 3) = t == 0 ? 1.0f : 0.0f;
    for (int f = 0; f < 8; ++f) s.X(t, 4 + f) = words[t][f];
    for (int f = 12; f < D; ++f) s.X(t, f) = 0.3f * seeded_uniform(7, StageKind::X, t, f);
  }
}

// A query column that matches keys [cos θj, sin θj] best at j = t − back: q = a·R(−back·θ)·[cos θt, sin θt].
void look_back(Matrix& W_q, int col, int back, float a) {
  const float c = std::cos(kAnimalTheta * static_cast<float>(back)), sn = std::sin(kAnimalTheta * static_cast<float>(back));
  W_q(0, col) = a * c, W_q(1, col) = a * sn;
  W_q(0, col + 1) = -a * sn, W_q(1, col + 1) = a * c;
}

// Small seeded weights where a matrix is still 0, so it looks like a learned one.
void fill_zeros_with_noise(Matrix& W, StageKind kind) {
  for (Eigen::Index r = 0; r < W.rows(); ++r)
    for (Eigen::Index c = 0; c < W.cols(); ++c)
      if (W(r, c) == 0.0f) W(r, c) = 0.05f * seeded_uniform(11, kind, static_cast<int>(r), static_cast<int>(c));
}

Scenario multi_head() {
  constexpr int D = kAnimalD, H = 4, dk = 4;
  Scenario s;
  s.title = "Four heads, four jobs";
  s.description =
      "T = 8, d_model = 16, 4 heads of d_k = 4, causal, with W_o. Head 0 attends to the previous token, head 1 to "
      "the first token, head 2 lets 'it' find the nouns, head 3 stays near the token itself.";
  animal_sentence(s);
  s.W_q = Matrix::Zero(D, H * dk);
  s.W_k = Matrix::Zero(D, H * dk);
  // head 0: q = a·R(−θ)·[cos θt, sin θt] = a·[cos θ(t−1), sin θ(t−1)]; k = [cos θt, sin θt]
  look_back(s.W_q.edit(), 0, 1, 3.0f);
  s.W_k(0, 0) = 1.0f, s.W_k(1, 1) = 1.0f;
  // head 1: every query carries a constant, only the first token's key answers it
  s.W_q(2, dk + 0) = 3.0f;
  s.W_k(3, dk + 0) = 2.0f;
  // head 2: the pronoun asks for animate nouns; nouns answer
  s.W_q(4 + 5, 2 * dk + 0) = 3.0f, s.W_q(4 + 6, 2 * dk + 1) = 1.5f;
  s.W_k(4 + 1, 2 * dk + 0) = 1.5f, s.W_k(4 + 6, 2 * dk + 1) = 1.5f;
  s.W_q(2, 2 * dk + 2) = 0.5f, s.W_k(2, 2 * dk + 2) = 0.5f;  // a little everywhere else
  // head 3: q = a·[cos θt, sin θt] matches its own position best
  s.W_q(0, 3 * dk + 0) = 2.0f, s.W_q(1, 3 * dk + 1) = 2.0f;
  s.W_k(0, 3 * dk + 0) = 1.0f, s.W_k(1, 3 * dk + 1) = 1.0f;
  fill_zeros_with_noise(s.W_q.edit(), StageKind::W_q);
  fill_zeros_with_noise(s.W_k.edit(), StageKind::W_k);
  // values carry the word features: each head passes on a different slice of them
  s.W_v = seeded_matrix(13, StageKind::W_v, D, H * dk, D) * 0.5f;
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < dk; ++j) s.W_v(4 + (h * 2 + j) % 8, h * dk + j) += 1.0f;
  s.W_o = Matrix::Identity(H * dk, D) + 0.1f * seeded_matrix(17, StageKind::W_o, H * dk, D, 3);
  s.use_w_o = true;
  s.heads = H;
  s.mask_kind = MaskKind::Causal;
  return s;
}

// Grouped-query attention: eight query heads share two K/V heads. K/V head 0
// offers each token's position, K/V head 1 its word class; four query heads
// ask each one a different question, so heads that share keys still attend
// to different tokens.
Scenario gqa() {
  constexpr int D = kAnimalD, H = 8, KV = 2, dk = 4, dv = 4;
  Scenario s;
  s.title = "Eight heads, two K/V heads";
  s.description =
      "Grouped-query attention (Llama, Mistral, Qwen): 8 query heads over 2 K/V heads, T = 8, d_model = 16, "
      "causal. Heads 0-3 share keys that hold the position and look 1 back, to the start, at themselves and 2 "
      "back; heads 4-7 share keys that hold the word class and look for nouns, verbs, determiners, and (for 'it') "
      "the animate noun. The K/V cache is 4 times smaller than with 8 K/V heads.";
  animal_sentence(s);
  s.heads = H;
  s.kv_heads = KV;
  s.W_q = Matrix::Zero(D, H * dk);
  s.W_k = Matrix::Zero(D, KV * dk);
  // K/V head 0: [cos θt, sin θt, first token, 0]
  s.W_k(0, 0) = 1.0f, s.W_k(1, 1) = 1.0f, s.W_k(3, 2) = 2.0f;
  look_back(s.W_q.edit(), 0 * dk, 1, 3.0f);           // head 0: the previous token
  s.W_q(2, 1 * dk + 2) = 3.0f;                 // head 1: the first token
  s.W_q(0, 2 * dk) = 2.0f, s.W_q(1, 2 * dk + 1) = 2.0f;  // head 2: itself
  look_back(s.W_q.edit(), 3 * dk, 2, 3.0f);           // head 3: two tokens back
  // K/V head 1: [noun, verb, determiner, animate]
  s.W_k(4 + 1, dk + 0) = 1.5f, s.W_k(4 + 2, dk + 1) = 1.5f, s.W_k(4 + 0, dk + 2) = 1.5f, s.W_k(4 + 6, dk + 3) = 1.5f;
  s.W_q(2, 4 * dk + 0) = 3.0f;                          // head 4: nouns
  s.W_q(2, 5 * dk + 1) = 3.0f;                          // head 5: verbs
  s.W_q(2, 6 * dk + 2) = 3.0f;                          // head 6: determiners
  s.W_q(4 + 5, 7 * dk + 3) = 3.0f, s.W_q(2, 7 * dk + 3) = 0.3f;  // head 7: 'it' asks for the animate noun
  fill_zeros_with_noise(s.W_q.edit(), StageKind::W_q);
  fill_zeros_with_noise(s.W_k.edit(), StageKind::W_k);
  // values: K/V head 0 passes on the word features, K/V head 1 the position
  s.W_v = seeded_matrix(13, StageKind::W_v, D, KV * dv, D) * 0.3f;
  for (int j = 0; j < dv; ++j) s.W_v(4 + j, j) += 1.0f, s.W_v(j % 4, dv + j) += 1.0f;
  s.W_o = seeded_matrix(17, StageKind::W_o, H * dv, D, H * dv);
  s.use_w_o = true;
  s.mask_kind = MaskKind::Causal;
  return s;
}

// RoPE: one head whose nouns look for the adjective just before them. Pair 0
// of the query and key (dimensions 0 and 2) turns by 1 radian per position;
// the query is the adjective's key turned back by one position, so the score
// is largest at a distance of 1 wherever the pair stands, and smaller for
// the same two words further apart.
Scenario rope() {
  Scenario s;
  s.title = "RoPE: distance, not position";
  s.description =
      "One head with RoPE (θ = 10000, HF Llama's pairing), causal. 'fox' asks for an adjective one position "
      "back: 'red fox' at positions 0-1 and 5-6 score the same (distance 1), while 'fox' at 6 and the 'red' at 0 "
      "score far less, though the words are the same. Turn RoPE off to see every 'red' score alike.";
  s.tokens = {"red", "fox", "and", "the", "old", "red", "fox", "ran"};
  // features: [adjective, noun, verb, function word]
  s.X = rows({{1.0f, 0.0f, 0.0f, 0.0f},
              {0.0f, 1.0f, 0.0f, 0.0f},
              {0.0f, 0.0f, 0.0f, 1.0f},
              {0.0f, 0.0f, 0.0f, 1.0f},
              {0.8f, 0.0f, 0.0f, 0.2f},
              {1.0f, 0.0f, 0.0f, 0.0f},
              {0.0f, 1.0f, 0.0f, 0.0f},
              {0.0f, 0.0f, 1.0f, 0.0f}});
  s.features = {"adjective", "noun", "verb", "function"};
  s.rope.on = true;
  // d_k = 4: pair 0 is dimensions (0, 2), turning 1 rad per position; pair 1 (1, 3) turns 0.01 rad.
  // key of an adjective: [1, 0, 0, 0]; query of a noun: a·[cos 1, 0, −sin 1, 0], so that
  // score(i, j) = a·cos(j − i + 1): a at j = i − 1.
  const float a = 4.0f;
  s.W_q = Matrix::Zero(4, 4);
  s.W_q(1, 0) = a * std::cos(1.0f), s.W_q(1, 2) = -a * std::sin(1.0f);
  s.W_q(3, 1) = 0.5f, s.W_q(2, 1) = 0.5f;  // a little content match in the slow pair
  s.W_k = Matrix::Zero(4, 4);
  s.W_k(0, 0) = 1.0f;
  s.W_k(3, 1) = 0.5f;
  s.W_v = Matrix::Identity(4, 4);
  s.heads = 1;
  s.mask_kind = MaskKind::Causal;
  return s;
}

// Cross-attention as a translation model uses it (seed 002): the decoder's
// French words ask the encoder's English words which one they translate.
// Each word holds its meaning (det, cat, black, sleep, end) and a little
// noise; queries and keys compare meanings, so 'noir' finds 'black' although
// the two languages put the adjective on different sides of the noun.
Scenario translate() {
  Scenario s;
  s.title = "Cross-attention: le chat noir dort";
  s.description =
      "Cross-attention: 4 French words being written (queries, from X) attend to 5 English source words (keys and "
      "values, from X_kv), as a translation model's decoder does. Each word carries its meaning; 'noir' finds "
      "'black' and 'chat' finds 'cat' although the word order differs. No causal mask: every query may read every "
      "source word.";
  s.tokens = {"le", "chat", "noir", "dort"};
  s.tokens_kv = {"the", "black", "cat", "sleeps", "."};
  s.features = {"det", "cat", "black", "sleep", "end"};
  // meanings [det, cat, black, sleep, end] plus a little seeded noise (a real model's are never one-hot)
  const int target[4] = {0, 1, 2, 3}, source[5] = {0, 2, 1, 3, 4};
  s.X = Matrix::Zero(4, 5);
  s.X_kv = Matrix::Zero(5, 5);
  for (int t = 0; t < 4; ++t) {
    s.X(t, target[t]) = 1.0f;
    for (int f = 0; f < 5; ++f) s.X(t, f) += 0.1f * seeded_uniform(23, StageKind::X, t, f);
  }
  for (int t = 0; t < 5; ++t) {
    s.X_kv(t, source[t]) = 1.0f;
    for (int f = 0; f < 5; ++f) s.X_kv(t, f) += 0.1f * seeded_uniform(29, StageKind::X_kv, t, f);
  }
  // queries ask for the meaning they hold; keys offer the meaning they hold
  s.W_q = Matrix::Zero(5, 4);
  s.W_k = Matrix::Zero(5, 4);
  s.W_v = Matrix::Zero(5, 4);
  for (int f = 0; f < 4; ++f) s.W_q(f, f) = 5.0f, s.W_k(f, f) = 1.0f, s.W_v(f, f) = 1.0f;
  fill_zeros_with_noise(s.W_q.edit(), StageKind::W_q);
  fill_zeros_with_noise(s.W_k.edit(), StageKind::W_k);
  s.heads = 1;
  s.mask_kind = MaskKind::None;
  return s;
}

// The animal sentence with H heads of width dk and W_q, W_k still 0, for the
// caller to set the questions and answers of each head (then finish_animal_heads).
void start_animal_heads(Scenario& s, int H, int dk) {
  animal_sentence(s);
  s.heads = H;
  s.W_q = Matrix::Zero(kAnimalD, H * dk);
  s.W_k = Matrix::Zero(kAnimalD, H * dk);
}

// Noise where W_q and W_k are still 0; values that pass on word features
// (each head its own slice of them, or all the same ones); a seeded W_o.
void finish_animal_heads(Scenario& s, int H, int dk, bool own_features) {
  constexpr int D = kAnimalD;
  fill_zeros_with_noise(s.W_q.edit(), StageKind::W_q);
  fill_zeros_with_noise(s.W_k.edit(), StageKind::W_k);
  s.W_v = seeded_matrix(13, StageKind::W_v, D, H * dk, D) * 0.3f;
  for (int h = 0; h < H; ++h)
    for (int j = 0; j < dk; ++j) s.W_v(4 + (own_features ? (h * dk + j) % 8 : j), h * dk + j) += 1.0f;
  s.W_o = seeded_matrix(17, StageKind::W_o, H * dk, D, H * dk);
  s.use_w_o = true;
}

// ALiBi (BLOOM, MPT): no position in X's numbers that the queries use; each
// head adds m_h·(j − i) to its scaled scores, m_h = 1/2, 1/4, … 1/256 for 8
// heads. The queries and keys here are small noise, so what each head shows
// is its bias: head 0 reads the last token or two, head 7 nearly everything.
Scenario alibi() {
  constexpr int H = 8, dk = 2;
  Scenario s;
  s.title = "ALiBi: a penalty per step back";
  s.description =
      "ALiBi (BLOOM, MPT): 8 heads, causal, no position embeddings. Each head adds m·(j − i) to its scores, a "
      "penalty that grows with the distance back; the slopes m halve from head to head (1/2, 1/4, … 1/256). The "
      "queries and keys are small noise here, so the bias is what you see: head 0 reads the last few tokens, "
      "head 7 all of them nearly alike. Turn ALiBi off and every head spreads evenly.";
  start_animal_heads(s, H, dk);
  finish_animal_heads(s, H, dk, true);  // queries and keys: noise only
  s.alibi = true;
  s.mask_kind = MaskKind::Causal;
  return s;
}

// A sliding window (Mistral): each token sees only the last 3. Head 0 looks
// for the first token and head 1 lets 'it' look for the animate noun; the
// window hides both from the later tokens, which fall back on what they can
// still see.
Scenario window() {
  constexpr int H = 2, dk = 4;
  Scenario s;
  s.title = "Sliding window: the last 3 tokens";
  s.description =
      "A sliding-window mask (Mistral, Gemma): each token sees itself and the 2 tokens before it. Head 0 looks for "
      "the first token: tokens 0-2 find it, the later ones cannot and spread over their window. Head 1 lets 'it' "
      "look for the animate noun, 'animal', 6 tokens back: out of reach, so 'it' finds only itself (it is animate "
      "too). Widen the window (or choose causal) to let them find their tokens again.";
  start_animal_heads(s, H, dk);
  s.W_q(2, 0) = 3.0f, s.W_k(3, 0) = 2.0f;                       // head 0: every query asks for the first token
  s.W_q(4 + 5, dk + 0) = 3.0f, s.W_k(4 + 6, dk + 0) = 1.5f;     // head 1: the pronoun asks for animate nouns
  finish_animal_heads(s, H, dk, true);
  s.mask_kind = MaskKind::Window;
  s.window = 3;
  return s;
}

// Attention sinks (gpt-oss): a learned logit per head joins each row's
// softmax and takes its share of the attention, which is then dropped. Both
// heads look for nouns; head 0 has a sink it can look at instead, head 1
// practically none, so where no noun is in reach (the first tokens) head 0's
// row sums to far less than 1 while head 1 must put everything somewhere.
Scenario sinks() {
  constexpr int H = 2, dk = 4;
  Scenario s;
  s.title = "Attention sinks: room to look at nothing";
  s.description =
      "Attention sinks (gpt-oss): each head has one more logit that joins every row's softmax; its share is "
      "dropped, so a row's weights add up to less than 1. Both heads look for nouns. Head 0's sink (logit 1.5) "
      "takes most of the attention of the row with no noun in reach ('the' keeps 0.19 for itself, the sink 0.81) "
      "and about a quarter of the others; head 1's sink (logit −10) is practically absent, so 'the' must give "
      "all its attention to itself, with nothing to find.";
  start_animal_heads(s, H, dk);
  for (int h = 0; h < H; ++h) s.W_q(2, h * dk) = 3.0f, s.W_k(4 + 1, h * dk) = 1.5f;  // every query asks for nouns
  finish_animal_heads(s, H, dk, false);
  s.sinks = rows({{1.5f, -10.0f}});
  s.use_sinks = true;
  s.mask_kind = MaskKind::Causal;
  return s;
}

}  // namespace

const std::vector<PresetInfo>& presets() {
  static const std::vector<PresetInfo> list = {
      {"fat-cat", "the fat cat sat on the mat", "T=7, d_model=4, one head, causal: nouns attend to adjectives"},
      {"book", "Your journey starts with one step", "the book's example: d_in=3, d_out=2, no mask"},
      {"naive", "NaiveAttention (n_embd=4)", "fused q/k/v projection with biases, causal, 5 tokens"},
      {"multi-head", "Four heads, four jobs", "T=8, d_model=16, 4 heads, causal, with W_o"},
      {"gqa", "Eight heads, two K/V heads", "grouped-query attention: 8 query heads share 2 K/V heads"},
      {"rope", "RoPE: distance, not position", "one head with rotary positions: the same words score by distance"},
      {"translate", "Cross-attention: le chat noir dort", "4 French queries over 5 English keys and values"},
      {"alibi", "ALiBi: a penalty per step back", "8 heads whose position bias halves from head to head"},
      {"window", "Sliding window: the last 3 tokens", "a window mask hides the tokens two heads look for"},
      {"sinks", "Attention sinks: room to look at nothing", "a sink logit per head; rows sum to less than 1"},
  };
  return list;
}

Scenario random_scenario(int T, int d_model, int heads, MaskKind mask, std::uint64_t seed) {
  Scenario s;
  s.title = "random T=" + std::to_string(T) + ", d_model=" + std::to_string(d_model) + ", " + std::to_string(heads) +
            " heads";
  s.seed = seed;
  const int dk = std::max(1, d_model / heads);
  s.heads = heads;
  s.X = seeded_matrix(seed, StageKind::X, T, d_model, d_model);
  s.W_q = seeded_matrix(seed, StageKind::W_q, d_model, heads * dk, d_model);
  s.W_k = seeded_matrix(seed, StageKind::W_k, d_model, heads * dk, d_model);
  s.W_v = seeded_matrix(seed, StageKind::W_v, d_model, heads * dk, d_model);
  s.W_o = seeded_matrix(seed, StageKind::W_o, heads * dk, d_model, heads * dk);
  s.use_w_o = true;
  s.mask_kind = mask;
  return s;
}

namespace {

// The sizes of "random-T-D-H", or nullopt when `name` is not of that form.
std::optional<std::array<int, 3>> random_preset_sizes(std::string_view name) {
  if (name.substr(0, 7) != "random-") return std::nullopt;
  std::array<int, 3> v = {0, 0, 0};
  std::size_t pos = 7;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto end = name.find('-', pos);
    const auto part = name.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v[i]);
    if (ec != std::errc{} || ptr != part.data() + part.size() || v[i] < 1) return std::nullopt;
    if ((end == std::string_view::npos) != (i == 2)) return std::nullopt;
    pos = end + 1;
  }
  return v;
}

// Checked before random_scenario allocates T × d_model and the weights.
std::string random_size_problem(int T, int d_model, int heads) {
  using namespace limits;
  Dims d;
  d.T = T, d.d_model = d_model, d.heads = heads;
  d.d_k = d.d_v = std::max(1, d_model / heads);
  d.d_out = d_model;
  const std::string need = " (size limit; that size would need about " + format_bytes(estimated_bytes(d)) + ")";
  if (T > kMaxTokens) return "T: expected 1 to " + std::to_string(kMaxTokens) + ", found " + std::to_string(T) + need;
  if (d_model > kMaxModelDim)
    return "d_model: expected 1 to " + std::to_string(kMaxModelDim) + ", found " + std::to_string(d_model) + need;
  if (heads > kMaxHeads)
    return "heads: expected 1 to " + std::to_string(kMaxHeads) + ", found " + std::to_string(heads) + need;
  if (heads * d.d_k > kMaxProjectionWidth)
    return "heads*d_k: expected at most " + std::to_string(kMaxProjectionWidth) + ", found " +
           std::to_string(heads * d.d_k) + need;
  return memory_problem(d);
}

}  // namespace

std::string preset_problem(std::string_view name) {
  if (const auto v = random_preset_sizes(name)) {
    if (auto problem = random_size_problem((*v)[0], (*v)[1], (*v)[2]); !problem.empty())
      return std::string(name) + ": " + problem;
    return {};
  }
  for (const auto& p : presets())
    if (p.name == name) return {};
  std::string names;
  for (const auto& p : presets()) names += (names.empty() ? "" : ", ") + p.name;
  return "expected one of " + names + " or random-T-D-H (e.g. random-64-32-4), found '" + excerpt(name) + "'";
}

std::optional<Scenario> make_preset(std::string_view name) {
  // "random-T-D-H": a seeded random layer of that size, causal (benchmarks, big-size views).
  if (name.substr(0, 7) == "random-") {
    const auto v = random_preset_sizes(name);
    if (!v || !random_size_problem((*v)[0], (*v)[1], (*v)[2]).empty()) return std::nullopt;
    Scenario s = random_scenario((*v)[0], (*v)[1], (*v)[2], MaskKind::Causal, 0x5eedULL);
    if (!validate(s).empty()) return std::nullopt;
    return s;
  }
  if (name == "fat-cat") return fat_cat();
  if (name == "book") return book();
  if (name == "naive") return naive();
  if (name == "multi-head") return multi_head();
  if (name == "gqa") return gqa();
  if (name == "rope") return rope();
  if (name == "translate") return translate();
  if (name == "alibi") return alibi();
  if (name == "window") return window();
  if (name == "sinks") return sinks();
  return std::nullopt;
}

}  // namespace attention_lab
