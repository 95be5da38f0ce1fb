#include "attention_lab/trace_io.h"

#include "attention_lab/json_text.h"

namespace attention_lab {

void write_trace(std::ostream& out, const Engine& engine) {
  using json_text::quote;
  using json_text::write_matrix;
  const Dims& d = engine.dims();
  out << "{\n  \"format\": " << quote(kTraceFormat) << ",\n";
  out << "  \"dims\": {\"T\": " << d.T << ", \"d_model\": " << d.d_model << ", \"heads\": " << d.heads
      << ", \"d_k\": " << d.d_k << ", \"d_v\": " << d.d_v << ", \"d_out\": " << d.d_out << "},\n";
  for (auto kind : {StageKind::X, StageKind::Q, StageKind::K, StageKind::V}) {
    out << "  " << quote(kind_name(kind)) << ": ";
    write_matrix(out, engine.stage(StageId::input(kind)), 2);
    out << ",\n";
  }
  out << "  \"heads\": [";
  for (int h = 0; h < d.heads; ++h) {
    out << (h ? ", {" : "{");
    bool first = true;
    for (auto kind : {StageKind::HeadQ, StageKind::HeadK, StageKind::HeadV, StageKind::Scores, StageKind::Scaled,
                      StageKind::Masked, StageKind::Weights, StageKind::Context}) {
      out << (first ? "\n" : ",\n") << "    " << quote(kind_name(kind)) << ": ";
      write_matrix(out, engine.stage(StageId::of_head(kind, h)), 4);
      first = false;
    }
    out << "\n  }";
  }
  out << "],\n  \"concat\": ";
  write_matrix(out, engine.stage(StageId::input(StageKind::Concat)), 2);
  out << ",\n  \"output\": ";
  write_matrix(out, engine.stage(StageId::input(StageKind::Output)), 2);
  out << ",\n  \"warnings\": [";
  bool first = true;
  for (const auto& w : engine.warnings()) {
    out << (first ? "" : ", ") << quote(w.message);
    first = false;
  }
  out << "]\n}\n";
}

}  // namespace attention_lab
