#include "logic/autosave_timer.h"

#include <chrono>

namespace attention_lab::gui {

AutosaveTimer::Action AutosaveTimer::poll(std::uint64_t revision, bool unsaved, double now) {
  if (revision != seen_) {
    seen_ = revision;
    last_change_ = now;
    if (!first_unwritten_) first_unwritten_ = now;
  }
  if (!unsaved) {
    first_unwritten_.reset();
    written_ = 0;
    return file_ ? Action::Remove : Action::Wait;
  }
  if (written_ == seen_ && file_) return Action::Wait;
  if (!first_unwritten_) first_unwritten_ = now;  // unsaved from the start (restored work)
  if (now - last_change_ >= quiet_ || now - *first_unwritten_ >= longest_) return Action::Write;
  return Action::Wait;
}

void AutosaveTimer::wrote(std::uint64_t revision) {
  written_ = revision;
  file_ = true;
  // Changes made while the file was being written are still to come.
  if (revision == seen_) first_unwritten_.reset();
}

void AutosaveTimer::removed() {
  file_ = false;
  written_ = 0;
}

void BackgroundWriter::start(std::function<std::string()> work, std::uint64_t tag) {
  tag_ = tag;
  pending_ = std::async(std::launch::async, std::move(work));
}

std::optional<BackgroundWriter::Done> BackgroundWriter::finished() {
  if (!pending_.valid() || pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
  return Done{tag_, pending_.get()};
}

void BackgroundWriter::wait() {
  if (pending_.valid()) pending_.get();
}

}  // namespace attention_lab::gui
