#pragma once
// A layer of one of the committed tiny checkpoints (tests/models/fixtures)
// as model mode opens it: the session on the fixtures' ids and the layer's
// scenario as a document.

#include "attention_lab/document.h"
#include "attention_lab/model_session.h"
#include "attention_lab/tokenizer.h"

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

namespace attention_lab::test {

inline const std::filesystem::path kModelFixtures = ATTENTION_LAB_MODEL_FIXTURES_DIR;
inline const std::vector<int> kModelFixtureIds = {3, 14, 15, 9, 2, 6, 53};

struct ModelLayer {
  std::shared_ptr<ModelSession> session;
  std::unique_ptr<Document> doc;
};

inline ModelLayer open_model_layer(const char* name, int layer) {
  LoadedModel m = load_model(kModelFixtures / name);
  if (!m.model) throw std::runtime_error(m.error);
  std::string error;
  auto t = Tokenizer::load(kModelFixtures / name, m.model->config.vocab, error);
  if (!t) throw std::runtime_error(error);
  ModelLayer f;
  f.session = ModelSession::start(m.model, t, kModelFixtureIds, layer, nullptr, error);
  if (!f.session) throw std::runtime_error(error);
  f.doc = std::make_unique<Document>(std::move(f.session->scenario().scenario));
  return f;
}

}  // namespace attention_lab::test
