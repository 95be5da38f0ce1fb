#include "attention_lab/run_cache.h"

namespace attention_lab {

LayerHooks recording_hooks(const LayerHooks& own, RunCache& cache, int layer) {
  LayerHooks h = own;
  const auto l = static_cast<std::size_t>(layer);
  // Each records after the intervention it wraps, so the cache holds what the run used.
  h.z = [&cache, l, f = own.z](Matrix& m) {
    if (f) f(m);
    cache.z[l] = m;
  };
  h.attn_out = [&cache, l, f = own.attn_out](Matrix& m) {
    if (f) f(m);
    cache.attn_out[l] = m;
  };
  h.mlp_out = [&cache, l, f = own.mlp_out](Matrix& m) {
    if (f) f(m);
    cache.mlp_out[l] = m;
  };
  return h;
}

RunCache run_with_cache(const TransformerModel& model, std::span<const int> ids, CacheAttention attention,
                        std::span<const LayerHooks> hooks) {
  const auto layers = model.layers.size();
  RunCache c;
  c.ids.assign(ids.begin(), ids.end());
  c.z.resize(layers);
  c.attn_out.resize(layers);
  c.mlp_out.resize(layers);
  if (attention == CacheAttention::Everything) c.attention.resize(layers);
  c.resid.reserve(layers + 1);
  c.resid.push_back(embed(model, ids));
  for (std::size_t l = 0; l < layers; ++l) {
    const LayerHooks none;
    const LayerHooks h = recording_hooks(l < hooks.size() ? hooks[l] : none, c, static_cast<int>(l));
    AttentionDetail* detail = c.attention.empty() ? nullptr : &c.attention[l];
    c.resid.push_back(run_layer(model, static_cast<int>(l), c.resid.back(), h, detail));
  }
  return c;
}

RowVector row_logits(const TransformerModel& model, const Matrix& last_output, int row) {
  return logits(model, last_output, row, 1).row(0);
}

}  // namespace attention_lab
