#include "logic/autosave_timer.h"
#include "logic/recovery_store.h"

#include "attention_lab/document.h"
#include "attention_lab/presets.h"
#include "attention_lab/scenario_io.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace attention_lab::gui {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "recovery-test-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

RecoveryInfo some_info() {
  RecoveryInfo info;
  info.saved_unix = 1763942400;
  info.file_path = "/home/t/evening \"prep\".json";
  info.title = "line one\nline two";  // a newline must not break the one-line info
  info.lesson_path = "/usr/share/attention-lab/lessons/causal-masking.json";
  info.lesson_step = 3;
  info.T = 6, info.d_model = 4, info.heads = 1;
  return info;
}

// A child process that takes `lock` and then dies with SIGKILL or lives until told.
pid_t child_holding(const fs::path& lock, int ready_fd) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto held = FileLock::try_acquire(lock);
    const char c = held ? 'y' : 'n';
    (void)!::write(ready_fd, &c, 1);
    ::pause();
    ::_exit(0);
  }
  return pid;
}

TEST(RecoveryDir, FollowsXdgStateHomeElseHome) {
  EXPECT_EQ(recovery_dir_for("/x/state", "/home/u"), fs::path("/x/state/attention-lab/recovery"));
  EXPECT_EQ(recovery_dir_for(nullptr, "/home/u"), fs::path("/home/u/.local/state/attention-lab/recovery"));
  EXPECT_EQ(recovery_dir_for("", "/home/u"), fs::path("/home/u/.local/state/attention-lab/recovery"));
  // The XDG spec: a relative path is invalid and ignored.
  EXPECT_EQ(recovery_dir_for("rel/state", "/home/u"), fs::path("/home/u/.local/state/attention-lab/recovery"));
}

TEST(SessionNames, RoundTripAndRejectForeignNames) {
  const SessionId id{4242, 1763942400123};
  EXPECT_EQ(session_stem(id), "session-4242-1763942400123");
  EXPECT_EQ(parse_session_stem(session_stem(id)), id);
  EXPECT_FALSE(parse_session_stem("session-4242"));
  EXPECT_FALSE(parse_session_stem("session--1-5"));
  EXPECT_FALSE(parse_session_stem("session-0-5"));
  EXPECT_FALSE(parse_session_stem("session-12-99999999999999999999999"));
  EXPECT_FALSE(parse_session_stem("notes-1-2"));
  EXPECT_EQ(this_session().pid, static_cast<long>(::getpid()));
  EXPECT_EQ(this_session(), this_session());  // taken once
}

TEST(RecoveryFile, InfoAndScenarioRoundTrip) {
  TempDir dir;
  const Scenario s = *make_preset("fat-cat");
  const std::string text = recovery_file_text(some_info(), scenario_to_json(s));
  EXPECT_EQ(std::count(text.begin(), text.begin() + static_cast<long>(text.find('{', 1)), '\n'), 1)
      << "the info is exactly one line";
  ASSERT_EQ(write_durably(dir.path / "a.json", text), "");
  const LoadedRecovery r = load_recovery_file(dir.path / "a.json");
  ASSERT_TRUE(r.scenario) << r.error;
  ASSERT_TRUE(r.info);
  EXPECT_EQ(r.info->file_path, some_info().file_path);
  EXPECT_EQ(r.info->title, some_info().title);
  EXPECT_EQ(r.info->lesson_step, 3);
  EXPECT_EQ(r.info->saved_unix, 1763942400);
  EXPECT_EQ(scenario_to_json(*r.scenario), scenario_to_json(s));
}

TEST(RecoveryFile, DamagedFilesSayWhatIsWrong) {
  TempDir dir;
  EXPECT_NE(parse_recovery_info("{\"format\": \"something-else\"}").error.find("format"), std::string::npos);
  EXPECT_NE(parse_recovery_info("not json").error.find("line 1"), std::string::npos);
  std::ofstream(dir.path / "torn.json") << recovery_file_text(some_info(), "{\"format\": \"attention-lab/scen");
  const LoadedRecovery torn = load_recovery_file(dir.path / "torn.json");
  EXPECT_FALSE(torn.scenario);
  EXPECT_NE(torn.error.find("the scenario"), std::string::npos) << torn.error;
  EXPECT_FALSE(load_recovery_file(dir.path / "missing.json").scenario);
}

TEST(FileLock, IsExclusiveEvenWithinOneProcessAndFreedOnRelease) {
  TempDir dir;
  auto a = FileLock::try_acquire(dir.path / "x.lock");
  ASSERT_TRUE(a);
  EXPECT_FALSE(FileLock::try_acquire(dir.path / "x.lock"));
  a->release();
  EXPECT_TRUE(FileLock::try_acquire(dir.path / "x.lock"));
}

TEST(RecoverySession, WritesItsOwnFileAndRemovesBoth) {
  TempDir dir;
  RecoverySession session(dir.path / "deep" / "recovery", SessionId{77, 5});
  ASSERT_EQ(session.claim(), "");
  EXPECT_EQ((fs::status(dir.path / "deep").permissions() & fs::perms::all), fs::perms::owner_all);
  ASSERT_EQ(write_durably(session.file(), "x\n{}"), "");
  EXPECT_EQ(read(session.file()), "x\n{}");
  EXPECT_TRUE(claim_orphans(session.dir()).empty()) << "a live session's file is not an orphan";
  session.remove();
  EXPECT_FALSE(fs::exists(session.file()));
  EXPECT_FALSE(fs::exists(session.lock_file()));
}

TEST(Orphans, OnlyFilesOfDeadOwnersAreOfferedNewestFirstAndLockedWhileOffered) {
  TempDir dir;
  int pipe_fd[2];
  ASSERT_EQ(::pipe(pipe_fd), 0);
  // Three sessions: one alive (a child holding its lock), two dead (killed).
  const SessionId alive{111, 1}, old_dead{222, 2}, new_dead{333, 3};
  RecoveryInfo older = some_info(), newer = some_info();
  older.saved_unix = 1000, newer.saved_unix = 2000;
  for (auto [id, info] : {std::pair{alive, newer}, std::pair{old_dead, older}, std::pair{new_dead, newer}})
    ASSERT_EQ(write_durably(dir.path / (session_stem(id) + ".json"), recovery_file_text(info, "{}")), "");
  std::vector<pid_t> children;
  for (const SessionId& id : {alive, old_dead, new_dead}) {
    children.push_back(child_holding(dir.path / (session_stem(id) + ".lock"), pipe_fd[1]));
    char c = 0;
    ASSERT_EQ(::read(pipe_fd[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');
  }
  for (std::size_t i = 1; i < 3; ++i) {  // SIGKILL: no destructor, no cleanup, as in a crash
    ::kill(children[i], SIGKILL);
    ::waitpid(children[i], nullptr, 0);
  }
  // Leftovers of a dead session with nothing unsaved, and a torn temporary file.
  ASSERT_TRUE(FileLock::try_acquire(dir.path / "session-444-4.lock"));
  std::ofstream(dir.path / (".session-222-2.json.tmp-abc123")) << "half";

  std::vector<Orphan> orphans = claim_orphans(dir.path);
  ASSERT_EQ(orphans.size(), 2u);
  EXPECT_EQ(orphans[0].owner, new_dead);
  EXPECT_EQ(orphans[1].owner, old_dead);
  EXPECT_EQ(orphans[1].info.saved_unix, 1000);
  EXPECT_FALSE(fs::exists(dir.path / "session-444-4.lock"));
  EXPECT_FALSE(fs::exists(dir.path / ".session-222-2.json.tmp-abc123"));
  // While one instance offers them, a second instance starting sees none.
  EXPECT_TRUE(claim_orphans(dir.path).empty());

  // Discard deletes; adopting renames the file to the new session's name.
  discard_orphan(orphans[1]);
  EXPECT_FALSE(fs::exists(dir.path / "session-222-2.json"));
  EXPECT_FALSE(fs::exists(dir.path / "session-222-2.lock"));
  RecoverySession mine(dir.path, SessionId{555, 5});
  ASSERT_EQ(mine.claim(), "");
  ASSERT_EQ(adopt_orphan(orphans[0], mine), "");
  EXPECT_EQ(parse_recovery_info(read(mine.file()).substr(0, read(mine.file()).find('\n'))).info->saved_unix, 2000);
  EXPECT_FALSE(fs::exists(dir.path / "session-333-3.json"));
  EXPECT_FALSE(fs::exists(dir.path / "session-333-3.lock"));
  EXPECT_TRUE(claim_orphans(dir.path).empty()) << "the adopted file belongs to a live session now";

  ::kill(children[0], SIGKILL);
  ::waitpid(children[0], nullptr, 0);
  EXPECT_EQ(claim_orphans(dir.path).size(), 1u) << "once its owner died, the alive session's file is an orphan";
}

TEST(Orphans, AnUnreadableInfoLineIsStillOfferedToDiscard) {
  TempDir dir;
  std::ofstream(dir.path / "session-9-9.json") << "garbage";
  auto orphans = claim_orphans(dir.path);
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_FALSE(orphans[0].error.empty());
}

TEST(SavedTime, SaysWhenAndHowLongAgo) {
  const std::int64_t now = 1763942400;
  EXPECT_NE(describe_saved_time(now - 10, now).find("less than a minute ago"), std::string::npos);
  EXPECT_NE(describe_saved_time(now - 240, now).find("4 minutes ago"), std::string::npos);
  EXPECT_NE(describe_saved_time(now - 3600, now).find("1 hour ago"), std::string::npos);
  EXPECT_NE(describe_saved_time(now - 3 * 86400, now).find("3 days ago"), std::string::npos);
  EXPECT_NE(describe_saved_time(now - 3 * 86400, now).find("-"), std::string::npos) << "another day shows its date";
}

TEST(AutosaveTimer, WritesOnceAfterTheChangesStop) {
  AutosaveTimer t(3.0, 30.0);
  EXPECT_EQ(t.poll(1, false, 0.0), AutosaveTimer::Action::Wait);
  // A drag: a change every frame for 2 seconds; nothing is written meanwhile.
  std::uint64_t rev = 1;
  for (double now = 1.0; now < 3.0; now += 0.02) EXPECT_EQ(t.poll(++rev, true, now), AutosaveTimer::Action::Wait);
  EXPECT_EQ(t.poll(rev, true, 5.0), AutosaveTimer::Action::Wait);
  EXPECT_EQ(t.poll(rev, true, 6.0), AutosaveTimer::Action::Write);
  t.wrote(rev);
  EXPECT_EQ(t.poll(rev, true, 60.0), AutosaveTimer::Action::Wait) << "written: nothing more to do";
  // Saved: the file goes, once.
  EXPECT_EQ(t.poll(rev + 1, false, 61.0), AutosaveTimer::Action::Remove);
  t.removed();
  EXPECT_EQ(t.poll(rev + 1, false, 62.0), AutosaveTimer::Action::Wait);
}

TEST(AutosaveTimer, EndlessChangesAreStillWrittenWithinTheLongestDelay) {
  AutosaveTimer t(3.0, 30.0);
  std::uint64_t rev = 1;
  double now = 0.0;
  while (t.poll(++rev, true, now) == AutosaveTimer::Action::Wait) now += 0.5;
  EXPECT_NEAR(now, 30.0, 0.5);
  t.wrote(rev - 1);  // a change came while writing: the file is one revision behind
  EXPECT_EQ(t.poll(rev, true, now + 3.5), AutosaveTimer::Action::Write);
}

TEST(AutosaveTimer, RestoredWorkIsUnsavedFromTheStartAndRewrittenUnderTheNewName) {
  AutosaveTimer t(3.0, 30.0);
  t.file_exists();
  EXPECT_EQ(t.poll(7, true, 100.0), AutosaveTimer::Action::Wait);
  EXPECT_EQ(t.poll(7, true, 103.0), AutosaveTimer::Action::Write);
  AutosaveTimer discarded;
  discarded.file_exists();
  EXPECT_EQ(discarded.poll(7, false, 0.0), AutosaveTimer::Action::Remove);
}

TEST(BackgroundWriter, RunsTheWorkOffThisThreadAndHandsTheResultOverOnce) {
  BackgroundWriter w;
  EXPECT_FALSE(w.finished());
  std::promise<void> go;
  auto gate = go.get_future().share();
  w.start([gate] { gate.wait(); return std::string("disk full"); }, 42);
  EXPECT_TRUE(w.busy());
  EXPECT_FALSE(w.finished()) << "not done while the worker waits";
  go.set_value();
  w.wait();
  EXPECT_FALSE(w.busy());
  w.start([] { return std::string(); }, 43);
  std::optional<BackgroundWriter::Done> done;
  while (!(done = w.finished())) std::this_thread::yield();
  EXPECT_EQ(done->tag, 43u);
  EXPECT_EQ(done->error, "");
  EXPECT_FALSE(w.finished());
}

TEST(RestoredDocument, StaysUnsavedThroughUndoUntilSaved) {
  Document doc(*make_preset("fat-cat"));
  doc.mark_unsaved();
  EXPECT_TRUE(doc.modified());
  ASSERT_EQ(doc.apply(SetTemperature{2.0f}), "");
  ASSERT_TRUE(doc.undo());
  EXPECT_TRUE(doc.modified()) << "undo cannot reach a saved state: the restored work was never saved";
  doc.mark_saved();
  EXPECT_FALSE(doc.modified());
}

}  // namespace
}  // namespace attention_lab::gui
