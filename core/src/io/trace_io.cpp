#include "attention_lab/trace_io.h"

#include "attention_lab/json_text.h"
#include "attention_lab/stage_registry.h"

namespace attention_lab {

void write_trace(std::ostream& out, const Engine& engine, const Scenario& scenario,
                 const std::function<void(std::ostream&)>& extra) {
  using json_text::quote;
  using json_text::write_matrix;
  const Dims& d = engine.dims();
  out << "{\n  \"format\": " << quote(kTraceFormat) << ",\n";
  out << "  \"dims\": {\"T\": " << d.T << ", \"d_model\": " << d.d_model << ", \"heads\": " << d.heads
      << (d.kv_heads != d.heads ? ", \"kv_heads\": " + std::to_string(d.kv_heads) : std::string()) << ", \"d_k\": " << d.d_k
      << ", \"d_v\": " << d.d_v << ", \"d_out\": " << d.d_out
      << (scenario.cross() ? ", \"T_k\": " + std::to_string(d.T_k) + ", \"d_kv\": " + std::to_string(d.d_kv) : std::string())
      << "},\n";
  // Top-level stages in the math's order up to the heads, then each head's
  // entry, then what comes after the heads; the registry says which are traced.
  const auto top = [&](Trace where) {
    for (const StageSpec& sp : all_stages()) {
      if (sp.trace != where || !setting_on(scenario, sp.requires_setting)) continue;
      out << "  " << quote(sp.id_name) << ": ";
      write_matrix(out, engine.stage(StageId::input(sp.kind)), 2);
      out << ",\n";
    }
  };
  top(Trace::Top);
  out << "  \"heads\": [";
  for (int h = 0; h < d.heads; ++h) {
    out << (h ? ", {" : "{");
    bool first = true;
    for (const StageSpec& sp : all_stages()) {
      if (sp.trace != Trace::InHead || !setting_on(scenario, sp.requires_setting)) continue;
      out << (first ? "\n" : ",\n") << "    " << quote(sp.id_name) << ": ";
      write_matrix(out, engine.stage(StageId::of_head(sp.kind, h)), 4);
      first = false;
    }
    out << "\n  }";
  }
  out << "],\n";
  top(Trace::AfterHeads);
  if (extra) extra(out);
  out << "  \"warnings\": [";
  bool first = true;
  for (const auto& w : engine.warnings()) {
    out << (first ? "" : ", ") << quote(w.message);
    first = false;
  }
  out << "]\n}\n";
}

void write_gradients(std::ostream& out, const Gradients& grads, const Scenario& scenario) {
  using json_text::quote;
  using json_text::write_matrix;
  out << "  \"loss\": ";
  json_text::write_number(out, static_cast<float>(grads.loss));
  out << ",\n  \"grad\": {";
  bool first = true;
  const auto member = [&](const char* name, const Matrix& m, int indent) {
    out << (first ? "\n" : ",\n") << std::string(static_cast<std::size_t>(indent), ' ') << quote(name) << ": ";
    write_matrix(out, m, indent);
    first = false;
  };
  // (the weights too, which the value trace leaves to the scenario file: their gradients are what training uses)
  const auto top = [&](Trace where) {
    for (const StageSpec& sp : all_stages())
      if ((sp.trace == where || (where == Trace::Top && sp.trace == Trace::No)) && !sp.per_head &&
          setting_on(scenario, sp.requires_setting))
        if (const Matrix* g = grads.find(StageId::input(sp.kind))) member(sp.id_name, *g, 4);
  };
  top(Trace::Top);
  out << (first ? "\n" : ",\n") << "    \"heads\": [";
  first = true;
  for (int h = 0; h < scenario.heads; ++h) {
    out << (h ? ", {" : "{");
    bool first_in_head = true;
    for (const StageSpec& sp : all_stages()) {
      if (sp.trace != Trace::InHead || !setting_on(scenario, sp.requires_setting)) continue;
      const Matrix* g = grads.find(StageId::of_head(sp.kind, h));
      if (!g) continue;
      out << (first_in_head ? "\n" : ",\n") << "      " << quote(sp.id_name) << ": ";
      write_matrix(out, *g, 6);
      first_in_head = false;
    }
    out << "\n    }";
  }
  out << "]";
  first = false;
  top(Trace::AfterHeads);
  out << "\n  },\n";
}

}  // namespace attention_lab
