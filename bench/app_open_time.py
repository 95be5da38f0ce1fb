#!/usr/bin/env python3
"""The app's time from `attention-lab --model MODEL` to its first predictions
on screen, against `attention-lab-cli bench --model`'s session start at the
same T, in one run (alternating, so a burst of load on a shared machine hits
both alike).

    xvfb-run -a -s '-screen 0 1280x800x24' bench/app_open_time.py MODEL --T 256 [--runs 3]

The app is timed from its start to the first --probe that shows the model's
T tokens and predictions current for the unedited layer (the probe is
written every frame). The text is T token ids (11, 12, …), which every
tokenizer reads as ids when the model has no BPE tokenizer; with one, pass
--text. Needs a release build (scripts/test makes one).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = os.path.join(ROOT, "build", "release", "bin", "attention-lab")
CLI = os.path.join(ROOT, "build", "release", "bin", "attention-lab-cli")


def ready(probe, T):
    try:
        with open(probe) as f:
            m = json.load(f).get("model")
    except (OSError, ValueError):
        return False
    return bool(m and m["T"] == T and m["predictions"] and m["predictions_revision_current"])


def app_seconds(model, text, T, timeout):
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.json")
        start = time.monotonic()
        app = subprocess.Popen([APP, "--model", model, "--text", text, "--probe", probe],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            while not ready(probe, T):
                if app.poll() is not None:
                    sys.exit("app_open_time: the app ended first: " + app.stderr.read().strip())
                if time.monotonic() - start > timeout:
                    sys.exit("app_open_time: no predictions after %.0f s" % timeout)
                time.sleep(0.005)
            return time.monotonic() - start
        finally:
            app.terminate()
            app.wait()


def bench(model, T):
    env = dict(os.environ)
    out = subprocess.run([CLI, "bench", "--model", model, "--T", str(T), "--runs", "1", "--json"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--T", type=int, default=256)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--text", help="the app's text (default: T token ids)")
    ap.add_argument("--timeout", type=float, default=120.0)
    a = ap.parse_args()
    if not os.environ.get("DISPLAY"):
        sys.exit("app_open_time: no DISPLAY; run it under xvfb-run (see --help)")
    text = a.text or " ".join(str(11 + i) for i in range(a.T))
    apps, starts = [], []
    for run in range(a.runs):
        j = bench(a.model, a.T)
        starts.append(j["session_start_ms"] / 1000.0)
        apps.append(app_seconds(a.model, text, a.T, a.timeout))
        print("run %d: app %.2f s, bench session start %.2f s (load %.2f s, forward %.2f s)" %
              (run + 1, apps[-1], starts[-1], j["load_first_ms"] / 1000.0, j["forward_ms"] / 1000.0), file=sys.stderr)
    app, start = statistics.median(apps), statistics.median(starts)
    print(json.dumps({"model": a.model, "T": a.T, "runs": a.runs, "app_s": round(app, 3),
                      "session_start_s": round(start, 3), "ratio": round(app / start, 3),
                      "app_runs_s": [round(x, 3) for x in apps], "session_start_runs_s": [round(x, 3) for x in starts]}))


if __name__ == "__main__":
    main()
