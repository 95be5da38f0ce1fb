#!/usr/bin/env python3
"""Soak: drives the real app with seeded random X input and watches it.

  soak.py --app BINARY --minutes M [--seed N] [--out DIR] [--max-growth PERCENT]

Runs inside an X server (scripts/soak starts a private Xvfb). First a fixed
warm-up tour touches every part of the app once (each centre view, presenter
mode, help, a lesson, a quiz, Compare, the file dialog, font sizes), so what
is allocated once is in the baseline; then random actions until the time is
up: hovers, clicks, drags (Shift for finer, Ctrl to pan), double-click and
type (numbers and junk), the wheel, menus, undo/redo, presets, tabs, lesson
steps, Compare, keys. Every second it records the app's resident memory
(VmRSS in /proc/PID/status) and the frames drawn; at the end the app's own
frame-time histogram (the probe's "frame_times": each frame's work from input
to swap) and a clean quit through the unsaved-changes question.

It fails (exit 1) when the app crashes (any exit before the end: a signal or
a non-zero status), hangs (no frame for 30 s), or when RSS grows by
--max-growth % or more between the first and the last checkpoint: RSS read
after the warm-up, every minute and at the end with the app put back into
one fixed state (no dialog, not presenter mode, the smallest font), so memory
that belongs to a state (a font atlas at 4x) cancels out. The report goes to OUT/soak-report.json
and stdout; OUT/actions.log lists every action, to replay a seed.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LESSONS = os.path.join(ROOT, "assets", "lessons")
W, H = 1280, 800
# Where things are at 1280x800 and the base font (the probe gives heatmaps and
# named items; these are the fixed menu bar, tabs and controls). At other font
# sizes they land elsewhere, which is fine: the input is random anyway.
MENUS = {"File": 24, "Edit": 65, "View": 110, "Help": 159}
TABS = [277, 353, 462, 566]
PRESET_COMBO = (118, 89)
QUIZ_ME = (1004, 49)


class AppGone(Exception):
    pass


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.out = os.path.abspath(args.out)
        os.makedirs(self.out, exist_ok=True)
        self.probe_path = os.path.join(self.out, "probe.json")
        self.log = open(os.path.join(self.out, "actions.log"), "w")
        self.counts = {}
        self.samples = []  # (seconds since start, rss KiB, frame, phase)
        self.checkpoints = []  # (seconds since start, rss KiB) in the same fixed state
        self.t0 = time.time()
        self.last_sample = 0.0
        self.last_frame = (-1, time.time())
        self.popup_streak = 0
        # What the app said it showed at least once: proof the input reached it.
        self.seen = {"centre_views": set(), "lesson_steps": set(), "presenter": False, "snapshot": False,
                     "blank": False, "quiz": False, "modified": False, "T": set(), "autosaves": 0}
        files = os.path.join(self.out, "files")
        os.makedirs(files, exist_ok=True)
        self.files = files
        self.scenario = os.path.join(files, "soak-scenario.json")

    # [SECTION] The app

    def start(self):
        # A fresh start every run: no recovery file or font scale left by an earlier one.
        for d in ("state", "config"):
            shutil.rmtree(os.path.join(self.out, d), ignore_errors=True)
        if os.path.exists(self.probe_path):
            os.remove(self.probe_path)
        env = dict(os.environ)
        env["XDG_STATE_HOME"] = os.path.join(self.out, "state")
        env["XDG_CONFIG_HOME"] = os.path.join(self.out, "config")
        env.setdefault("OMP_NUM_THREADS", "2")
        self.stderr = open(os.path.join(self.out, "app.stderr"), "w")
        self.proc = subprocess.Popen([self.args.app, "--probe", self.probe_path, "--size", "%dx%d" % (W, H)],
                                     cwd=self.files, env=env, stderr=self.stderr)
        deadline = time.time() + 60
        while not os.path.exists(self.probe_path):
            if self.proc.poll() is not None or time.time() > deadline:
                raise SystemExit("soak: the app did not start (see %s/app.stderr)" % self.out)
            time.sleep(0.1)
        self.wid = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--pid", str(self.proc.pid)],
                                  capture_output=True, text=True).stdout.split()[0]
        self.x("windowfocus", "--sync", self.wid)

    def probe(self):
        for _ in range(50):
            try:
                with open(self.probe_path) as f:
                    return json.load(f)
            except (OSError, ValueError):
                time.sleep(0.05)
        self.check_alive()
        raise AppGone("the probe cannot be read")

    def rss_kib(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def check_alive(self):
        code = self.proc.poll()
        if code is not None:
            how = ("killed by signal %d" % -code) if code < 0 else ("exited with status %d" % code)
            raise AppGone("the app %s" % how)

    def watch(self, phase):
        """Between actions: is it alive, drawing, how big; answer stuck popups."""
        self.check_alive()
        now = time.time()
        p = self.probe()
        frame = p.get("frame", 0)
        seen = self.seen
        seen["centre_views"].add(p.get("centre_view"))
        if p.get("lesson_step"):
            seen["lesson_steps"].add(p.get("lesson_step"))
        seen["T"].add(p.get("T"))
        for k in ("presenter", "snapshot", "blank", "modified"):
            seen[k] = seen[k] or bool(p.get(k))
        seen["quiz"] = seen["quiz"] or p.get("quiz") is not None
        seen["autosaves"] = max(seen["autosaves"], p.get("recovery", {}).get("autosaves", 0))
        if frame != self.last_frame[0]:
            self.last_frame = (frame, now)
        elif now - self.last_frame[1] > 30:
            raise AppGone("the app hangs: no new frame for 30 s (frame %d)" % frame)
        if now - self.last_sample >= 1.0:
            rss = self.rss_kib()
            if rss is not None:
                self.samples.append((round(now - self.t0, 2), rss, frame, phase))
            self.last_sample = now
        # A dialog left open would swallow the random input: close it after a few actions.
        open_ = p.get("popup") or p.get("file_dialog") or p.get("confirm_quit") or p.get("unsaved_question")
        self.popup_streak = self.popup_streak + 1 if open_ else 0
        if self.popup_streak >= 4:
            self.key("Escape")
            if self.popup_streak >= 6:
                self.key("Return")  # the "Problem" message closes on Enter
            if p.get("confirm_quit") and self.popup_streak >= 8:
                raise AppGone("the unsaved-changes question cannot be closed")
        return p

    # [SECTION] Input

    def x(self, *args):
        subprocess.run(["xdotool"] + [str(a) for a in args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def move(self, x, y):
        self.x("mousemove", "--window", self.wid, int(x), int(y))

    def key(self, *keys):
        self.x("key", "--clearmodifiers", *keys)

    def note(self, kind, detail=""):
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.log.write("%.2f %s %s\n" % (time.time() - self.t0, kind, detail))

    def pause(self, lo=0.02, hi=0.15):
        time.sleep(self.rng.uniform(lo, hi))

    def random_cell(self, p, inputs_only=False):
        maps = [h for h in p.get("heatmaps", []) if h["x1"] - h["x0"] > 4 and h["y1"] - h["y0"] > 4
                and 0 <= h["x0"] and h["x1"] <= W and 0 <= h["y0"] and h["y1"] <= H]
        if inputs_only:
            maps = [h for h in maps if h["stage"] in ("X", "W_q", "W_k", "W_v", "W_o")] or maps
        if not maps:
            return None
        h = self.rng.choice(maps)
        return (self.rng.uniform(h["x0"] + 1, h["x1"] - 1), self.rng.uniform(h["y0"] + 1, h["y1"] - 1), h["stage"])

    def anywhere(self):
        return self.rng.uniform(0, W - 1), self.rng.uniform(0, H - 1)

    # [SECTION] Actions

    def hover(self, p):
        c = self.random_cell(p) or (*self.anywhere(), "-")
        self.move(c[0], c[1])
        self.note("hover", c[2])

    def click(self, p):
        c = self.random_cell(p) if self.rng.random() < 0.6 else None
        x, y = (c[0], c[1]) if c else self.anywhere()
        self.move(x, y)
        self.x("click", 1)
        self.note("click", "%d,%d" % (x, y))

    def drag(self, p):
        c = self.random_cell(p)
        if not c:
            return self.click(p)
        mod = self.rng.choice([None, None, "shift", "ctrl"])
        self.move(c[0], c[1])
        time.sleep(0.05)
        if mod:
            self.x("keydown", mod)
        self.x("mousedown", 1)
        y = c[1]
        for _ in range(self.rng.randint(2, 12)):
            y += self.rng.uniform(-25, 25)
            self.move(c[0] + self.rng.uniform(-3, 3), min(max(y, 0), H - 1))
            time.sleep(0.03)
        self.x("mouseup", 1)
        if mod:
            self.x("keyup", mod)
        self.note("drag", "%s %s" % (c[2], mod or ""))

    def type_value(self, p):
        c = self.random_cell(p, inputs_only=self.rng.random() < 0.7)
        if not c:
            return self.click(p)
        self.move(c[0], c[1])
        time.sleep(0.05)
        self.x("click", "--repeat", 2, "--delay", 60, 1)
        time.sleep(0.2)
        text = self.rng.choice(["0.5", "-1.25", "3", "0", "-0", "1e3", "1e40", "abc", "nan", "inf", "", "12.5.3",
                                "%.3f" % self.rng.uniform(-5, 5)])
        self.key("ctrl+a")
        if text:
            self.x("type", "--delay", 20, "--", text)
        self.key(self.rng.choice(["Return", "Return", "Escape"]))
        self.note("type", "%s %r" % (c[2], text))

    def wheel(self, p):
        c = self.random_cell(p) if self.rng.random() < 0.6 else None
        x, y = (c[0], c[1]) if c else self.anywhere()
        self.move(x, y)
        self.x("click", "--repeat", self.rng.randint(1, 4), "--delay", 30, self.rng.choice([4, 5]))
        self.note("wheel")

    def menu(self, p):
        name = self.rng.choice(list(MENUS))
        self.move(MENUS[name], 11)
        self.x("click", 1)
        time.sleep(0.15)
        # Walk down the open menu; File only hovers (its Quit would end the soak).
        for _ in range(self.rng.randint(1, 4)):
            self.move(MENUS[name] + self.rng.uniform(10, 120), self.rng.uniform(28, 260))
            time.sleep(0.08)
        if name != "File" and self.rng.random() < 0.7:
            self.x("click", 1)
            self.note("menu", name + " item")
        else:
            self.key("Escape")
            self.note("menu", name)

    def keys(self, p):
        k = self.rng.choice(["Left", "Right", "space", "Escape", "F1", "Prior", "Next", "b", "p", "l", "q", "h",
                             "Return", "F5", "ctrl+z", "ctrl+shift+z", "ctrl+y", "ctrl+t", "ctrl+equal",
                             "ctrl+minus", "Home", "Tab", "1", "x"])
        self.key(k)
        self.note("key", k)

    def undo_redo(self, p):
        for _ in range(self.rng.randint(1, 5)):
            self.key(self.rng.choice(["ctrl+z", "ctrl+z", "ctrl+shift+z", "ctrl+y"]))
            time.sleep(0.03)
        self.note("undo/redo")

    def tab(self, p):
        x = self.rng.choice(TABS)
        self.move(x, 41)
        self.x("click", 1)
        self.note("view tab", str(x))

    def preset(self, p):
        self.move(*PRESET_COMBO)
        self.x("click", 1)
        time.sleep(0.15)
        self.move(PRESET_COMBO[0], PRESET_COMBO[1] + 22 * self.rng.randint(1, 5))
        time.sleep(0.05)
        self.x("click", 1)
        self.note("preset")

    def open_file(self, p, path=None):
        """Ctrl+O, the path of a lesson or of a scenario saved earlier, Enter."""
        lessons = [os.path.join(LESSONS, f) for f in sorted(os.listdir(LESSONS)) if f.endswith(".json")]
        path = path or self.rng.choice(lessons + [self.scenario, os.path.join(self.files, "missing.json")])
        self.key("ctrl+o")
        deadline = time.time() + 5
        while time.time() < deadline and not self.probe().get("text_input"):
            time.sleep(0.05)
        self.key("ctrl+a")
        self.x("type", "--delay", 5, "--", path)
        self.key("Return")
        self.note("open", os.path.basename(path))

    def lesson_steps(self, p):
        for _ in range(self.rng.randint(1, 6)):
            self.key(self.rng.choice(["Next", "Next", "Prior", "Right", "Left"]))
            time.sleep(self.rng.uniform(0.05, 0.3))
        self.note("lesson steps", str(p.get("lesson_step")))

    def compare(self, p):
        self.key("ctrl+t")
        time.sleep(0.1)
        self.drag(self.probe())
        self.note("compare")

    def quiz(self, p):
        self.move(*QUIZ_ME)
        self.x("click", 1)
        time.sleep(0.1)
        self.key("q")
        self.x("type", "--delay", 20, "--", "%.2f" % self.rng.uniform(-2, 2))
        self.key("Return")
        if self.rng.random() < 0.5:
            self.key("h")
        self.note("quiz")

    def save(self, p):
        self.key("ctrl+s")  # a never-saved scenario opens Save as…: Enter writes it into files/
        time.sleep(0.3)
        if self.probe().get("file_dialog"):
            self.key("ctrl+a")
            self.x("type", "--delay", 5, "--", self.scenario)
            self.key("Return")
        self.note("save")

    ACTIONS = [  # (weight, method)
        (14, hover), (10, click), (12, drag), (6, type_value), (7, wheel), (6, menu), (10, keys), (5, undo_redo),
        (5, tab), (3, preset), (3, open_file), (5, lesson_steps), (2, compare), (2, quiz), (1, save),
    ]

    # [SECTION] Phases

    def warm_up(self):
        """Every part once, so the baseline holds what is allocated once."""
        steps = [
            lambda p: (self.move(TABS[1], 41), self.x("click", 1)),
            lambda p: (self.move(TABS[2], 41), self.x("click", 1)),
            lambda p: (self.move(TABS[3], 41), self.x("click", 1)),
            lambda p: (self.move(TABS[0], 41), self.x("click", 1)),
            lambda p: self.key("F1"), lambda p: self.key("F1"),
            lambda p: self.key("F5"), lambda p: self.key("ctrl+equal"), lambda p: self.key("ctrl+minus"),
            lambda p: self.key("F5"),
            lambda p: self.key("ctrl+equal"), lambda p: self.key("ctrl+minus"),
            lambda p: self.compare(p), lambda p: self.quiz(p), lambda p: self.key("Escape"),
            lambda p: self.type_value(p), lambda p: self.wheel(p), lambda p: self.save(p),
            lambda p: self.open_file(p, os.path.join(LESSONS, "attention-from-scratch.json")),
            lambda p: self.lesson_steps(p), lambda p: self.key("p"), lambda p: self.key("p"),
            lambda p: self.preset(p), lambda p: self.undo_redo(p), lambda p: self.menu(p),
        ]
        for step in steps:
            step(self.watch("warm-up"))
            time.sleep(0.3)
        self.note("warm-up done")

    def checkpoint(self):
        """RSS in one fixed state: no dialog, no blank screen, not presenter
        mode, the smallest font. Memory that depends on the state (a font atlas
        at 4x, presenter mode's) then cancels out, and what is left between two
        checkpoints is what the session kept: a leak."""
        for _ in range(3):
            self.key("Escape")
        p = self.watch("checkpoint")
        if p.get("blank"):
            self.key("b")
        if p.get("presenter"):
            self.key("F5")
        for _ in range(14):  # to the smallest font scale, whatever it was
            self.key("ctrl+minus")
        deadline = time.time() + 10
        while time.time() < deadline:
            p = self.watch("checkpoint")
            if not p.get("presenter") and not p.get("blank"):
                break
            time.sleep(0.1)
        frame = p.get("frame", 0)
        while self.watch("checkpoint").get("frame", 0) < frame + 10 and time.time() < deadline + 20:
            time.sleep(0.05)
        readings = []
        for _ in range(5):
            time.sleep(0.2)
            readings.append(self.rss_kib() or 0)
        rss = sorted(readings)[2]
        self.checkpoints.append((round(time.time() - self.t0, 1), rss))
        self.note("checkpoint", "%.1f MiB" % (rss / 1024))

    def run(self):
        self.start()
        crashed = None
        end = self.t0 + self.args.minutes * 60
        try:
            self.warm_up()
            self.checkpoint()
            weights = [w for w, _ in self.ACTIONS]
            next_checkpoint = time.time() + 60
            while time.time() < end:
                if time.time() >= next_checkpoint:
                    self.checkpoint()
                    next_checkpoint = time.time() + 60
                p = self.watch("random")
                _, action = self.rng.choices(self.ACTIONS, weights=weights)[0]
                action(self, p)
                self.pause()
            self.checkpoint()
            final = self.probe()
            self.quit_cleanly()
        except AppGone as e:
            crashed = str(e)
            final = None
        return self.report(crashed, final)

    def quit_cleanly(self):
        """Ctrl+Q; with unsaved changes, "Quit without saving": the exit must be status 0."""
        for _ in range(3):
            self.key("Escape")
        if self.probe().get("blank"):
            self.key("b")
        self.key("ctrl+q")
        deadline = time.time() + 30
        while self.proc.poll() is None and time.time() < deadline:
            p = self.probe() if os.path.exists(self.probe_path) else {}
            item = p.get("items", {}).get("quit without saving")
            if p.get("confirm_quit") and item:
                self.move((item[0] + item[2]) / 2, (item[1] + item[3]) / 2)
                time.sleep(0.1)
                self.x("click", 1)
            time.sleep(0.3)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            raise AppGone("Ctrl+Q did not quit within 30 s")
        if self.proc.returncode != 0:
            self.check_alive()

    def report(self, crashed, final):
        cps = self.checkpoints
        base = cps[0][1] if cps else 0
        last = cps[-1][1] if cps else 0
        growth = (last / base - 1.0) * 100.0 if base and len(cps) > 1 else 0.0
        rep = {
            "seed": self.args.seed,
            "minutes": self.args.minutes,
            "actions": sum(self.counts.values()),
            "by_kind": dict(sorted(self.counts.items())),
            "crash": crashed,
            "rss_first_checkpoint_mib": round(base / 1024, 1),
            "rss_last_checkpoint_mib": round(last / 1024, 1),
            "rss_checkpoints": [{"t": t, "rss_mib": round(r / 1024, 1)} for t, r in cps],
            "rss_max_mib": round(max([s[1] for s in self.samples] or [0]) / 1024, 1),
            "rss_growth_percent": round(growth, 2),
            "max_growth_percent": self.args.max_growth,
            "frames": final.get("frame") if final else None,
            "edits_applied": final.get("edits_applied") if final else None,
            "seen": {k: sorted(v) if isinstance(v, set) else v for k, v in self.seen.items()},
            "frame_times": final.get("frame_times") if final else None,
            "rss_samples": [{"t": s[0], "rss_kib": s[1], "frame": s[2], "phase": s[3]} for s in self.samples],
        }
        with open(os.path.join(self.out, "soak-report.json"), "w") as f:
            json.dump(rep, f, indent=1)
        print("soak: %.1f min, seed %d, %d actions, %s" % (self.args.minutes, self.args.seed, rep["actions"],
                                                            "CRASH: " + crashed if crashed else "no crash"))
        print("  actions: " + ", ".join("%s %d" % kv for kv in rep["by_kind"].items()))
        print("  RSS at the checkpoints (same state: no dialog, not presenter, smallest font), MiB: "
              + ", ".join("%ds %.1f" % (t, r / 1024) for t, r in cps))
        print("  RSS growth first -> last checkpoint: %+.2f %% (limit %g %%); max over the run %.1f MiB"
              % (growth, self.args.max_growth, rep["rss_max_mib"]))
        step = max(1, len(self.samples) // 12)
        print("  RSS over time (MiB): " + ", ".join("%ds %.1f" % (s[0], s[1] / 1024) for s in self.samples[::step]))
        if final:
            ft = final["frame_times"]
            print("  frames: %d, work time per frame: mean %.1f ms, p50 %.1f, p95 %.1f, p99 %.1f, max %.1f ms"
                  % (ft["count"], ft["mean_ms"], ft["p50_ms"], ft["p95_ms"], ft["p99_ms"], ft["max_ms"]))
        print("  the app showed: " + json.dumps(rep["seen"]) + ", edits applied: %s" % rep["edits_applied"])
        print("  report: %s/soak-report.json, actions: %s/actions.log" % (self.out, self.out))
        if not crashed and len(cps) < 2:
            crashed = "fewer than two RSS checkpoints"
        ok = not crashed and growth < self.args.max_growth
        if crashed:
            try:
                with open(os.path.join(self.out, "app.stderr")) as f:
                    tail = f.read()[-2000:]
                print("  app stderr (end):\n" + tail)
            except OSError:
                pass
        if not crashed and growth >= self.args.max_growth:
            print("FAIL: RSS grew by %.2f %%, the limit is %g %%" % (growth, self.args.max_growth))
        return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", required=True)
    ap.add_argument("--minutes", type=float, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="soak-out")
    ap.add_argument("--max-growth", type=float, default=10.0)
    args = ap.parse_args()
    sys.exit(Soak(args).run())


if __name__ == "__main__":
    main()
