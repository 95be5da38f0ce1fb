#include "attention_lab/model_cache.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace attention_lab {

namespace fs = std::filesystem;

bool is_model_folder(const fs::path& folder) {
  std::error_code ec;
  return fs::is_regular_file(folder / "config.json", ec) &&
         (fs::exists(folder / "model.safetensors", ec) || fs::exists(folder / "model.safetensors.index.json", ec));
}

fs::path huggingface_hub_dir() {
  const auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (const std::string v = env("HF_HUB_CACHE"); !v.empty()) return v;
  if (const std::string v = env("HF_HOME"); !v.empty()) return fs::path(v) / "hub";
  if (const std::string v = env("XDG_CACHE_HOME"); !v.empty()) return fs::path(v) / "huggingface" / "hub";
  return fs::path(env("HOME")) / ".cache" / "huggingface" / "hub";
}

namespace {
// models--ORG--NAME → ORG/NAME ("--" separates the parts; names themselves may hold single dashes).
std::string repo_name(const std::string& dir) {
  std::string name = dir.substr(8);
  if (const auto sep = name.find("--"); sep != std::string::npos) name.replace(sep, 2, "/");
  return name;
}
}  // namespace

std::string model_display_name(const fs::path& path) {
  fs::path p = path.lexically_normal();
  if (p.has_filename() && p.extension() == ".safetensors") p = p.parent_path();
  if (!p.has_filename()) p = p.parent_path();  // a trailing slash
  const fs::path snapshots = p.parent_path();
  if (snapshots.filename() == "snapshots") {
    const std::string repo = snapshots.parent_path().filename().string();
    if (repo.rfind("models--", 0) == 0) return repo_name(repo);
  }
  return p.filename().empty() ? path.string() : p.filename().string();
}

std::vector<CachedModel> find_cached_models(const fs::path& hub) {
  std::vector<CachedModel> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(hub, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string dir = it->path().filename().string();
    if (dir.rfind("models--", 0) != 0) continue;
    const std::string name = repo_name(dir);
    fs::path chosen;
    std::string ref;
    if (std::ifstream main(it->path() / "refs" / "main"); main && std::getline(main, ref) && !ref.empty() &&
        ref.find('/') == std::string::npos && is_model_folder(it->path() / "snapshots" / ref))
      chosen = it->path() / "snapshots" / ref;
    if (chosen.empty()) {
      fs::file_time_type newest{};
      std::error_code sec;
      for (auto snap = fs::directory_iterator(it->path() / "snapshots", fs::directory_options::skip_permission_denied, sec);
           !sec && snap != fs::directory_iterator(); snap.increment(sec)) {
        if (!is_model_folder(snap->path())) continue;
        std::error_code tec;
        const auto t = fs::last_write_time(snap->path(), tec);
        if (chosen.empty() || (!tec && t > newest)) chosen = snap->path(), newest = t;
      }
    }
    if (!chosen.empty()) out.push_back({name, chosen});
  }
  std::sort(out.begin(), out.end(), [](const CachedModel& a, const CachedModel& b) { return a.name < b.name; });
  return out;
}

}  // namespace attention_lab
