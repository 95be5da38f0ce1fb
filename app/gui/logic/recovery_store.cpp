#include "logic/recovery_store.h"

#include "attention_lab/scenario_io.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

namespace attention_lab::gui {

namespace fs = std::filesystem;

namespace {
constexpr const char* kPrefix = "session-";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Digits only, no sign, no overflow.
bool parse_unsigned(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

// Makes a rename in `dir` durable: the new directory entry reaches the disk.
void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}
}  // namespace

// [SECTION] Where

fs::path recovery_dir_for(const char* xdg_state_home, const char* home) {
  if (xdg_state_home && *xdg_state_home && fs::path(xdg_state_home).is_absolute())
    return fs::path(xdg_state_home) / "attention-lab" / "recovery";
  if (home && *home) return fs::path(home) / ".local" / "state" / "attention-lab" / "recovery";
  return fs::temp_directory_path() / "attention-lab" / "recovery";
}

fs::path recovery_dir() { return recovery_dir_for(std::getenv("XDG_STATE_HOME"), std::getenv("HOME")); }

SessionId this_session() {
  static const SessionId id{static_cast<long>(::getpid()),
                            static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                           std::chrono::system_clock::now().time_since_epoch())
                                                           .count())};
  return id;
}

std::string session_stem(const SessionId& id) {
  return kPrefix + std::to_string(id.pid) + "-" + std::to_string(id.started_ms);
}

std::optional<SessionId> parse_session_stem(const std::string& stem) {
  const std::string prefix = kPrefix;
  if (stem.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string rest = stem.substr(prefix.size());
  const auto dash = rest.find('-');
  if (dash == std::string::npos) return std::nullopt;
  std::uint64_t pid = 0, started = 0;
  if (!parse_unsigned(rest.substr(0, dash), pid) || !parse_unsigned(rest.substr(dash + 1), started) || pid == 0)
    return std::nullopt;
  return SessionId{static_cast<long>(pid), started};
}

// [SECTION] What

std::string recovery_file_text(const RecoveryInfo& info, const std::string& scenario_json) {
  nlohmann::json j;
  j["format"] = kRecoveryFormat;
  j["saved"] = info.saved_unix;
  j["file"] = info.file_path;
  j["title"] = info.title;
  j["lesson"] = info.lesson_path;
  j["lesson_step"] = info.lesson_step;
  j["T"] = info.T;
  j["d_model"] = info.d_model;
  j["heads"] = info.heads;
  // dump() escapes control characters, so the info is one line whatever the title holds.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" + scenario_json;
}

ParsedInfo parse_recovery_info(const std::string& first_line) {
  const nlohmann::json j = nlohmann::json::parse(first_line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return {std::nullopt, "line 1: expected the recovery info as a JSON object"};
  const auto format = j.find("format");
  if (format == j.end() || !format->is_string() || format->get<std::string>() != kRecoveryFormat)
    return {std::nullopt, std::string("line 1: \"format\": expected \"") + kRecoveryFormat + "\""};
  RecoveryInfo info;
  const auto text = [&](const char* key, std::string& out) {
    const auto it = j.find(key);
    if (it != j.end() && it->is_string()) out = it->get<std::string>();
  };
  const auto integer = [&](const char* key, auto& out) {
    const auto it = j.find(key);
    if (it != j.end() && it->is_number_integer()) out = it->get<std::remove_reference_t<decltype(out)>>();
  };
  text("file", info.file_path);
  text("title", info.title);
  text("lesson", info.lesson_path);
  integer("saved", info.saved_unix);
  integer("lesson_step", info.lesson_step);
  integer("T", info.T);
  integer("d_model", info.d_model);
  integer("heads", info.heads);
  info.lesson_step = std::max(info.lesson_step, 0);
  return {info, {}};
}

LoadedRecovery load_recovery_file(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return {std::nullopt, std::nullopt, path.string() + ": cannot read: " + ec.message()};
  // A scenario file's own limit, plus room for the info line.
  if (size > kMaxScenarioFileBytes + 65536)
    return {std::nullopt, std::nullopt, path.string() + ": " + std::to_string(size) + " bytes, more than a scenario may have"};
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (!in) return {std::nullopt, std::nullopt, path.string() + ": cannot read the whole file"};
  const auto newline = text.find('\n');
  ParsedInfo parsed = parse_recovery_info(text.substr(0, newline));
  if (!parsed.info) return {std::nullopt, std::nullopt, path.string() + ": " + parsed.error};
  if (newline == std::string::npos) return {parsed.info, std::nullopt, path.string() + ": no scenario after the first line"};
  LoadResult scenario = parse_scenario(text.substr(newline + 1));
  if (!scenario.scenario) return {parsed.info, std::nullopt, path.string() + ": the scenario: " + scenario.error};
  return {parsed.info, std::move(scenario.scenario), {}};
}

// [SECTION] Locks and files

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

std::optional<FileLock> FileLock::try_acquire(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return std::nullopt;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  FileLock lock;
  lock.fd_ = fd;
  lock.path_ = path;
  return lock;
}

void FileLock::release() {
  if (fd_ < 0) return;
  ::close(fd_);  // closing the last descriptor drops the flock
  fd_ = -1;
}

void FileLock::release_and_remove() {
  if (fd_ < 0) return;
  // Unlinked while still locked: nobody can take a lock on the name meanwhile
  // and find it "orphaned".
  ::unlink(path_.c_str());
  release();
}

std::string make_private_dir(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return {};
  if (dir.has_parent_path() && dir.parent_path() != dir)
    if (auto err = make_private_dir(dir.parent_path()); !err.empty()) return err;
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return dir.string() + ": cannot create the folder: " + std::strerror(errno);
  return {};
}

std::string write_durably(const fs::path& path, const std::string& contents) {
  if (auto err = write_file_atomically(path, contents); !err.empty()) return err;
  fsync_dir(path.parent_path());
  return {};
}

RecoverySession::RecoverySession(fs::path dir, SessionId id) : dir_(std::move(dir)), id_(id) {}

std::string RecoverySession::claim() {
  if (lock_.held()) return {};
  if (auto err = make_private_dir(dir_); !err.empty()) return err;
  auto lock = FileLock::try_acquire(lock_file());
  if (!lock) return lock_file().string() + ": cannot lock: " + std::strerror(errno);
  lock_ = std::move(*lock);
  return {};
}

void RecoverySession::remove() {
  std::error_code ec;
  fs::remove(file(), ec);  // the work first, the lock that guards it last
  lock_.release_and_remove();
}

// [SECTION] Orphans

std::vector<Orphan> claim_orphans(const fs::path& dir) {
  std::vector<Orphan> found;
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
  // A dead session's half-written temporaries (".session-….json.tmp-XXXXXX").
  const auto remove_temporaries = [&](const fs::path& json) {
    const std::string tmp_prefix = "." + json.filename().string() + ".tmp-";
    for (const fs::path& q : entries)
      if (q.filename().string().rfind(tmp_prefix, 0) == 0) fs::remove(q, ec);
  };
  // Pass 1: every session's .json whose lock nobody holds (a missing lock
  // file is created, and so is free: its owner cannot be running).
  for (const fs::path& p : entries) {
    if (!ends_with(p.filename().string(), ".json")) continue;
    const auto owner = parse_session_stem(p.stem().string());
    if (!owner) continue;
    auto lock = FileLock::try_acquire(dir / (p.stem().string() + ".lock"));
    if (!lock) continue;  // its owner is alive (or another new instance is offering it)
    if (!fs::exists(p, ec)) {  // its owner removed it just now, on a clean quit
      lock->release_and_remove();
      continue;
    }
    remove_temporaries(p);
    Orphan orphan;
    orphan.file = p;
    orphan.owner = *owner;
    orphan.lock = std::move(*lock);
    std::ifstream in(p, std::ios::binary);
    std::string first_line;
    char c;
    while (first_line.size() < 65536 && in.get(c) && c != '\n') first_line += c;  // the info line is short
    ParsedInfo parsed = parse_recovery_info(first_line);
    if (parsed.info) orphan.info = *parsed.info;
    else orphan.error = parsed.error;
    found.push_back(std::move(orphan));
  }
  // Pass 2: what dead sessions left with nothing to recover: a lock file
  // without its .json, and its temporaries.
  for (const fs::path& p : entries) {
    if (!ends_with(p.filename().string(), ".lock") || !parse_session_stem(p.stem().string())) continue;
    const fs::path json = dir / (p.stem().string() + ".json");
    const bool offered = std::any_of(found.begin(), found.end(), [&](const Orphan& o) { return o.file == json; });
    if (offered) continue;
    auto lock = FileLock::try_acquire(p);
    if (!lock) continue;
    remove_temporaries(json);
    if (!fs::exists(json, ec)) lock->release_and_remove();
  }
  std::sort(found.begin(), found.end(), [](const Orphan& a, const Orphan& b) {
    return a.info.saved_unix != b.info.saved_unix ? a.info.saved_unix > b.info.saved_unix
                                                  : a.owner.started_ms > b.owner.started_ms;
  });
  return found;
}

void discard_orphan(Orphan& orphan) {
  std::error_code ec;
  fs::remove(orphan.file, ec);
  orphan.lock.release_and_remove();
}

std::string adopt_orphan(Orphan& orphan, const RecoverySession& session) {
  if (!session.claimed()) return "the session's own lock is not held";
  if (::rename(orphan.file.c_str(), session.file().c_str()) != 0)
    return orphan.file.string() + ": cannot rename to " + session.file().string() + ": " + std::strerror(errno);
  fsync_dir(session.dir());
  orphan.lock.release_and_remove();
  return {};
}

std::string describe_saved_time(std::int64_t saved_unix, std::int64_t now_unix) {
  const std::time_t saved = static_cast<std::time_t>(saved_unix), now = static_cast<std::time_t>(now_unix);
  std::tm s{}, n{};
  localtime_r(&saved, &s);
  localtime_r(&now, &n);
  char when[48];
  if (s.tm_year == n.tm_year && s.tm_yday == n.tm_yday)
    std::strftime(when, sizeof when, "today at %H:%M:%S", &s);
  else
    std::strftime(when, sizeof when, "%Y-%m-%d at %H:%M:%S", &s);
  const std::int64_t ago = now_unix - saved_unix;
  std::string rel;
  const auto plural = [](std::int64_t k, const char* unit) {
    return std::to_string(k) + " " + unit + (k == 1 ? "" : "s") + " ago";
  };
  if (ago < 0) rel = "in the future (the clock changed?)";
  else if (ago < 60) rel = "less than a minute ago";
  else if (ago < 3600) rel = plural(ago / 60, "minute");
  else if (ago < 86400) rel = plural(ago / 3600, "hour");
  else rel = plural(ago / 86400, "day");
  return std::string(when) + ", " + rel;
}

}  // namespace attention_lab::gui
