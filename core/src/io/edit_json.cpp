#include "attention_lab/edit_json.h"

#include "attention_lab/excerpt.h"
#include "attention_lab/limits.h"
#include "attention_lab/scenario_io.h"
#include "io/edit_json_internal.h"
#include "io/json_document.h"
#include "io/json_fields.h"
#include "io/json_stage_fields.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace attention_lab {

using nlohmann::json;

namespace {

// [SECTION] The keys, one table

struct DimensionKey {
  Dimension which;
  int max;
};
constexpr std::array kDimensions = {
    DimensionKey{Dimension::T, limits::kMaxTokens},       DimensionKey{Dimension::d_model, limits::kMaxModelDim},
    DimensionKey{Dimension::heads, limits::kMaxHeads},    DimensionKey{Dimension::kv_heads, limits::kMaxHeads},
    DimensionKey{Dimension::d_k, limits::kMaxHeadDim},    DimensionKey{Dimension::d_v, limits::kMaxHeadDim},
    DimensionKey{Dimension::d_out, limits::kMaxModelDim}, DimensionKey{Dimension::T_k, limits::kMaxTokens},
    DimensionKey{Dimension::d_kv, limits::kMaxModelDim},
};

struct ToggleKey {
  Toggle which;
  const char* key;
};
constexpr std::array kToggles = {
    ToggleKey{Toggle::Scale, "scale"},          ToggleKey{Toggle::Bias, "bias"},   ToggleKey{Toggle::OutputProjection, "W_o"},
    ToggleKey{Toggle::OutputBias, "b_o"},       ToggleKey{Toggle::Alibi, "alibi"}, ToggleKey{Toggle::Sinks, "sinks"},
};

struct LabelListKey {
  LabelList which;
  const char* name;
};
constexpr std::array kLabelLists = {
    LabelListKey{LabelList::Tokens, "tokens"},
    LabelListKey{LabelList::Features, "features"},
    LabelListKey{LabelList::KeyTokens, "tokens_kv"},
};

// [SECTION] Numbers and matrices

// The longest side of any input an edit may set (T, T_k, d_model, h·d_k …).
constexpr int kMaxMatrixSide = std::max({limits::kMaxTokens, limits::kMaxModelDim, limits::kMaxProjectionWidth});

// A float as JSON in its shortest round-trip form: the double nearest to that
// decimal, which the JSON writer prints as the same few digits.
json number(float v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  *end = '\0';
  return json(std::strtod(buf, nullptr));
}

json matrix_json(const Matrix& m) {
  json rows = json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    json row = json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) row.push_back(number(m(r, c)));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Rows of finite float32 numbers, all the same length (an empty list: a 0 x 0 matrix).
Matrix read_matrix(const json& j, const std::string& where) {
  if (!j.is_array()) io::fail_field(where + ": expected a list of rows of numbers, found " + io::found(j));
  const auto side = static_cast<std::size_t>(kMaxMatrixSide);
  if (j.size() > side)
    io::fail_field(where + ": expected at most " + std::to_string(side) + " rows (size limit), found " + std::to_string(j.size()));
  const std::size_t cols = j.empty() ? 0 : (j[0].is_array() ? j[0].size() : 0);
  if (cols > side)
    io::fail_field(where + "[0]: expected at most " + std::to_string(side) + " numbers (size limit), found " + std::to_string(cols));
  Matrix m(static_cast<Eigen::Index>(j.size()), static_cast<Eigen::Index>(cols));
  for (std::size_t r = 0; r < j.size(); ++r) {
    const std::string wr = where + "[" + std::to_string(r) + "]";
    if (!j[r].is_array() || j[r].size() != cols || cols == 0)
      io::fail_field(wr + ": expected a row of " + (cols ? std::to_string(cols) : std::string("at least 1")) +
                     " numbers (like row 0), found " + io::found(j[r]));
    for (std::size_t c = 0; c < cols; ++c)
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) =
          static_cast<float>(io::read_number(j[r][c], wr + "[" + std::to_string(c) + "]"));
  }
  return m;
}

// [SECTION] Writing

json cell_json(StageId stage, int row, int col) { return json{{"stage", to_string(stage)}, {"row", row}, {"col", col}}; }

json rope_json(const Rope& r) {
  if (!r.on && r == Rope{}) return false;
  json j = json::parse(rope_setting_json(r));
  if (!r.on) j["on"] = false;  // an inverse keeps the θ of a RoPE turned off
  return j;
}

json mask_json(const SetMask& e) {
  const bool shorthand_kind = (e.kind == MaskKind::None || e.kind == MaskKind::Causal) && !e.custom && e.window < 0;
  if (shorthand_kind) return to_string(e.kind);
  if (e.kind == MaskKind::Window && !e.custom && e.window >= 1) return json{{"window", e.window}};
  if (e.kind == MaskKind::Custom && e.custom && e.custom->size() > 0 && e.window < 0) return matrix_json(*e.custom);
  json j{{"kind", to_string(e.kind)}};
  if (e.custom) j["custom"] = matrix_json(*e.custom);
  if (e.window >= 0) j["window"] = e.window;
  return j;
}

json pins_json(const std::map<PinKey, float>& pins) {
  json list = json::array();
  for (const auto& [k, v] : pins) {
    json p = cell_json(k.stage, k.row, k.col);
    p["value"] = number(v);
    list.push_back(std::move(p));
  }
  return list;
}

const char* key_of(Toggle t) {
  for (const ToggleKey& k : kToggles)
    if (k.which == t) return k.key;
  return "?";
}
const char* name_of(LabelList l) {
  for (const LabelListKey& k : kLabelLists)
    if (k.which == l) return k.name;
  return "?";
}

struct Writer {
  json operator()(const SetCell& e) const {
    json j = cell_json(e.target, e.row, e.col);
    j["value"] = number(e.value);
    return {{"set", j}};
  }
  json operator()(const SetMatrix& e) const {
    return {{"matrix", {{"stage", to_string(e.target)}, {"value", matrix_json(e.value)}, {"label", e.label}}}};
  }
  json operator()(const SetPin& e) const {
    json j = cell_json(e.key.stage, e.key.row, e.key.col);
    j["value"] = e.value ? number(*e.value) : json(nullptr);
    return {{"pin", j}};
  }
  json operator()(const SetPins& e) const {
    if (e.pins.empty()) return {{"clear_pins", true}};
    return {{"pins", pins_json(e.pins)}};
  }
  json operator()(const SetDimension& e) const { return {{to_string(e.which), e.value}}; }
  json operator()(const SetMask& e) const { return {{"mask", mask_json(e)}}; }
  json operator()(const SetToggle& e) const { return {{key_of(e.which), e.on}}; }
  json operator()(const SetTemperature& e) const { return {{"temperature", number(e.value)}}; }
  json operator()(const SetRope& e) const { return {{"rope", rope_json(e.value)}}; }
  json operator()(const SetQkNorm& e) const {
    if (!e.value.on() && e.value == QkNorm{}) return {{"qk_norm", false}};
    return {{"qk_norm", {{"scope", to_string(e.value.scope)}, {"eps", number(e.value.eps)}}}};
  }
  json operator()(const SetSoftcap& e) const { return {{"softcap", number(e.value)}}; }
  json operator()(const SetTokenLabel& e) const {
    json j{{"index", e.index}, {"label", e.label}};
    if (e.key) j["key"] = true;
    return {{"token_label", j}};
  }
  json operator()(const SetFeatureLabel& e) const { return {{"feature_label", {{"index", e.index}, {"label", e.label}}}}; }
  json operator()(const SetLabels& e) const { return {{"labels", {{"of", name_of(e.which)}, {"labels", e.labels}}}}; }
  json operator()(const ReplaceScenario& e) const {
    return {{"scenario", {{"label", e.label}, {"value", json::parse(scenario_to_json(*e.scenario))}}}};
  }
};

// [SECTION] Reading

SetMask read_mask(const json& v, const std::string& w, const Scenario& s) {
  const int T = s.T();
  const int Tk = static_cast<int>(s.kv_source().rows());
  const std::string expected = "expected \"none\", \"causal\", {\"window\": W} or " + std::to_string(T) + " rows of " +
                               std::to_string(Tk) + " zeros and ones (" + (s.cross() ? "T x T_k" : "T x T") + ")";
  // A window mask's width; 0 where the whole form keeps a scenario that never had one.
  auto window_of = [&](const json& n, const std::string& where, int lo = 1) {
    if (!n.is_number_integer() || n.get<long long>() < lo || n.get<long long>() > limits::kMaxTokens)
      io::fail_field(where + ": expected a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(limits::kMaxTokens) + ", found " + io::found(n));
    return static_cast<int>(n.get<long long>());
  };
  auto zeros_and_ones = [&](const json& m, const std::string& where, bool empty_allowed) {
    Matrix mask = read_matrix(m, where);
    if (mask.size() == 0 && empty_allowed) return mask;
    if (mask.rows() != T || mask.cols() != Tk)
      io::fail_field(where + ": " + expected + ", found " + std::to_string(mask.rows()) + " rows of " +
                     std::to_string(mask.cols()));
    for (Eigen::Index r = 0; r < mask.rows(); ++r)
      for (Eigen::Index c = 0; c < mask.cols(); ++c)
        if (mask(r, c) != 0.0f && mask(r, c) != 1.0f)
          io::fail_field(where + "[" + std::to_string(r) + "][" + std::to_string(c) + "]: expected 0 or 1, found " +
                         m[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)].dump());
    return mask;
  };
  if (v.is_string()) {
    const std::string kind = v.get<std::string>();
    if (kind == "none") return SetMask{MaskKind::None, std::nullopt};
    if (kind == "causal") return SetMask{MaskKind::Causal, std::nullopt};
    io::fail_field(w + ": " + expected + ", found " + io::found(v));
  }
  if (v.is_object()) {
    if (!v.contains("kind")) {  // {"window": W}
      if (v.size() != 1 || !v.contains("window")) io::fail_field(w + ": " + expected + ", found " + io::found(v));
      return SetMask{MaskKind::Window, std::nullopt, window_of(v["window"], w + ".window")};
    }
    // The whole form, as an inverse may need it: {"kind", "custom" (kept), "window"}.
    io::check_keys(v, w, {"kind", "custom", "window"});
    SetMask m;
    const std::string kind = io::read_string(v["kind"], w + ".kind", true);
    if (kind == "none") m.kind = MaskKind::None;
    else if (kind == "causal") m.kind = MaskKind::Causal;
    else if (kind == "window") m.kind = MaskKind::Window;
    else if (kind == "custom") m.kind = MaskKind::Custom;
    else io::fail_field(w + ".kind: expected \"none\", \"causal\", \"window\" or \"custom\", found " + io::found(v["kind"]));
    if (v.contains("custom")) m.custom = SharedMatrix(zeros_and_ones(v["custom"], w + ".custom", m.kind != MaskKind::Custom));
    if (v.contains("window")) m.window = window_of(v["window"], w + ".window", 0);
    return m;
  }
  if (!v.is_array()) io::fail_field(w + ": " + expected + ", found " + io::found(v));
  return SetMask{MaskKind::Custom, SharedMatrix(zeros_and_ones(v, w, false))};
}

Rope read_rope(const json& v, const std::string& w) {
  // false, true (θ 10000, rotate_half) or {"theta": θ, "pairs": …}, with "on": false for one kept off
  Rope r;
  if (v.is_boolean()) {
    r.on = v.get<bool>();
    return r;
  }
  if (!v.is_object()) io::fail_field(w + ": expected true, false or {\"theta\": 10000, \"pairs\": \"half\"}, found " + io::found(v));
  json setting = v;
  bool on = true;
  if (setting.contains("on")) {
    on = io::read_bool(setting["on"], w + ".on");
    setting.erase("on");
  }
  if (auto err = parse_rope_setting(setting.dump(), w, r); !err.empty()) io::fail_field(err);
  r.on = on;
  return r;
}

QkNorm read_qk_norm(const json& v, const std::string& w) {
  QkNorm q;
  if (v.is_boolean()) {
    if (v.get<bool>()) q.scope = QkNormScope::PerHead;
    return q;
  }
  if (!v.is_object()) io::fail_field(w + ": expected false or {\"scope\": \"head\" or \"whole\", \"eps\": 1e-6}, found " + io::found(v));
  io::check_keys(v, w, {"scope", "eps"});
  const std::string scope = io::read_string(io::require_key(v, "scope", w, " (\"head\", \"whole\" or \"off\")"), w + ".scope", true);
  if (scope == "head") q.scope = QkNormScope::PerHead;
  else if (scope == "whole") q.scope = QkNormScope::Whole;
  else if (scope == "off") q.scope = QkNormScope::Off;
  else io::fail_field(w + ".scope: expected \"head\", \"whole\" or \"off\", found " + io::found(v["scope"]));
  if (v.contains("eps")) {
    q.eps = static_cast<float>(io::read_number(v["eps"], w + ".eps"));
    if (!(q.eps >= 0.0f)) io::fail_field(w + ".eps: expected a number ≥ 0, found " + v["eps"].dump());
  }
  return q;
}

std::map<PinKey, float> read_pins(const json& v, const std::string& w, const Scenario& s) {
  if (!v.is_array()) io::fail_field(w + ": expected a list of {\"stage\", \"row\", \"col\", \"value\"}, found " + io::found(v));
  std::map<PinKey, float> pins;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string wi = w + "[" + std::to_string(i) + "]";
    const CellRef cell = io::read_cell(v[i], wi, s, {"stage", "row", "col", "value"}, &io::is_computed_kind,
                                       "a computed stage such as \"scores[0]\"");
    pins[PinKey{cell.stage, cell.row, cell.col}] =
        static_cast<float>(io::read_number(io::require_key(v[i], "value", wi, " (a number)"), wi + ".value"));
  }
  return pins;
}

// An undo entry's name ("randomize", "heads = 4"): a line of a menu.
constexpr std::size_t kMaxEditLabelBytes = 256;

// A string of at most `max_bytes`.
std::string read_label(const json& v, const std::string& w, std::size_t max_bytes) {
  std::string label = io::read_string(v, w, false);
  if (label.size() > max_bytes)
    io::fail_field(w + ": expected at most " + std::to_string(max_bytes) + " bytes, found " + std::to_string(label.size()));
  return label;
}

}  // namespace

namespace io {

json edit_json(const Edit& edit) { return std::visit(Writer{}, edit); }

Edit read_edit_value(const std::string& key, const json& v, const std::string& w, const Scenario& s) {
  for (const DimensionKey& d : kDimensions)
    if (key == to_string(d.which)) return SetDimension{d.which, read_int(v, w, 1, d.max)};
  for (const ToggleKey& t : kToggles)
    if (key == t.key) return SetToggle{t.which, read_bool(v, w)};
  if (key == "mask") return read_mask(v, w, s);
  if (key == "temperature") {
    const double t = read_number(v, w);
    if (!(t > 0.0)) fail_field(w + ": expected a number greater than 0, found " + v.dump());
    return SetTemperature{static_cast<float>(t)};
  }
  if (key == "rope") return SetRope{read_rope(v, w)};
  if (key == "qk_norm") return SetQkNorm{read_qk_norm(v, w)};
  if (key == "softcap") {
    const double c = read_number(v, w);
    if (!(c >= 0.0)) fail_field(w + ": expected 0 (off) or a number greater than 0, found " + v.dump());
    return SetSoftcap{static_cast<float>(c)};
  }
  if (key == "set") {
    const CellRef cell = read_cell(v, w, s, {"stage", "row", "col", "value"}, &is_input_kind,
                                   "an input such as \"X\", \"W_q\" or \"mask\" (computed stages are changed with \"pin\")");
    const double value = read_number(require_key(v, "value", w, " (the new value of the cell)"), w + ".value");
    return SetCell{cell.stage, cell.row, cell.col, static_cast<float>(value)};
  }
  if (key == "matrix") {
    if (!v.is_object()) fail_field(w + ": expected {\"stage\": \"W_q\", \"value\": [[…]]}, found " + found(v));
    check_keys(v, w, {"stage", "value", "label"});
    const std::string hint = " (expected {\"stage\": …, \"value\": [[…]]})";
    const StageId stage = read_stage(require_key(v, "stage", w, hint), w + ".stage", s);
    if (!is_input(stage.kind) || stage.role != Role::Value)
      fail_field(w + ".stage: expected an input such as \"X\" or \"W_q\", found \"" + to_string(stage) + "\"");
    require_stage(s, stage, w + ".stage");
    SetMatrix m{stage, SharedMatrix(read_matrix(require_key(v, "value", w, hint), w + ".value"))};
    if (v.contains("label")) m.label = read_label(v["label"], w + ".label", kMaxEditLabelBytes);
    return m;
  }
  if (key == "pin") {
    const CellRef cell = read_cell(v, w, s, {"stage", "row", "col", "value"}, &is_computed_kind,
                                   "a computed stage such as \"scores[0]\" (inputs are changed with \"set\")");
    const json& value = require_key(v, "value", w, " (a number, or null to unpin)");
    std::optional<float> pinned;
    if (!value.is_null()) pinned = static_cast<float>(read_number(value, w + ".value"));
    return SetPin{PinKey{cell.stage, cell.row, cell.col}, pinned};
  }
  if (key == "clear_pins") {
    if (!v.is_boolean() || !v.get<bool>()) fail_field(w + ": expected true, found " + found(v));
    return SetPins{};
  }
  if (key == "pins") return SetPins{read_pins(v, w, s)};
  if (key == "token_label" || key == "feature_label") {
    const bool token = key == "token_label";
    if (!v.is_object()) fail_field(w + ": expected {\"index\": i, \"label\": \"…\"}, found " + found(v));
    check_keys(v, w, token ? std::vector<std::string>{"index", "label", "key"} : std::vector<std::string>{"index", "label"});
    const std::string hint = " (expected {\"index\": i, \"label\": \"…\"})";
    const int index = read_int(require_key(v, "index", w, hint), w + ".index", 0,
                               (token ? limits::kMaxTokens : limits::kMaxModelDim) - 1);
    std::string label = read_label(require_key(v, "label", w, hint), w + ".label", static_cast<std::size_t>(limits::kMaxTokenLabelLength));
    if (!token) return SetFeatureLabel{index, std::move(label)};
    return SetTokenLabel{index, std::move(label), v.contains("key") && read_bool(v["key"], w + ".key")};
  }
  if (key == "labels") {
    if (!v.is_object()) fail_field(w + ": expected {\"of\": \"tokens\", \"labels\": [\"…\"]}, found " + found(v));
    check_keys(v, w, {"of", "labels"});
    const std::string hint = " (expected {\"of\": \"tokens\", \"features\" or \"tokens_kv\", \"labels\": […]})";
    const std::string of = read_string(require_key(v, "of", w, hint), w + ".of", true);
    SetLabels out;
    bool known = false;
    for (const LabelListKey& l : kLabelLists)
      if (of == l.name) out.which = l.which, known = true;
    if (!known) fail_field(w + ".of: expected \"tokens\", \"features\" or \"tokens_kv\", found " + found(v["of"]));
    const json& list = require_key(v, "labels", w, hint);
    if (!list.is_array() || list.size() > static_cast<std::size_t>(std::max(limits::kMaxTokens, limits::kMaxModelDim)))
      fail_field(w + ".labels: expected a list of labels, found " + found(list));
    for (std::size_t i = 0; i < list.size(); ++i) out.labels.push_back(read_label(list[i], w + ".labels[" + std::to_string(i) + "]", static_cast<std::size_t>(limits::kMaxTokenLabelLength)));
    return out;
  }
  if (key == "scenario") {
    if (!v.is_object()) fail_field(w + ": expected {\"label\": \"…\", \"value\": {a scenario}}, found " + found(v));
    check_keys(v, w, {"label", "value"});
    LoadResult loaded = parse_scenario(require_key(v, "value", w, " (the scenario)").dump());
    if (!loaded.scenario) fail_field(w + ".value." + loaded.error);
    ReplaceScenario r{std::make_shared<const Scenario>(std::move(*loaded.scenario))};
    if (v.contains("label")) r.label = read_label(v["label"], w + ".label", kMaxEditLabelBytes);
    return r;
  }
  std::string list;
  for (const std::string& k : edit_keys()) list += (list.empty() ? "" : ", ") + k;
  fail_field(w + ": unknown edit (expected one of " + list + ")");
}

}  // namespace io

const std::vector<std::string>& edit_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"mask", "temperature"};
    for (const ToggleKey& t : kToggles) k.emplace_back(t.key);
    for (const char* key : {"rope", "qk_norm", "softcap", "set", "matrix", "pin", "pins", "clear_pins"}) k.emplace_back(key);
    for (const DimensionKey& d : kDimensions) k.emplace_back(to_string(d.which));
    for (const char* key : {"token_label", "feature_label", "labels", "scenario"}) k.emplace_back(key);
    return k;
  }();
  return keys;
}

std::string edit_to_json(const Edit& edit) {
  return io::edit_json(edit).dump(-1, ' ', false, json::error_handler_t::replace);
}

ParsedEdit parse_edit(const std::string& json_text, const Scenario& scenario) {
  ParsedEdit out;
  io::JsonDocument doc = io::parse_json_document(json_text, "edit");
  if (!doc.error.empty()) {
    out.error = std::move(doc.error);
    return out;
  }
  try {
    const json& j = doc.root;
    if (!j.is_object() || j.size() != 1)
      io::fail_field("edit: expected an object with one change such as {\"mask\": \"causal\"}, found " +
                     (j.is_object() ? "an object with " + std::to_string(j.size()) + " keys" : io::found(j)));
    io::check_keys(j, "", edit_keys());
    out.edit = io::read_edit_value(j.begin().key(), j.begin().value(), j.begin().key(), scenario);
  } catch (const io::FieldError& e) {
    out.error = e.message;
  } catch (const std::exception& e) {  // out of memory and the like: reported, never a crash
    out.error = std::string("edit: could not read: ") + e.what();
  }
  return out;
}

}  // namespace attention_lab
