#!/usr/bin/env python3
"""Reads the app's --probe file for the GUI tests.

  probe.py FILE cell STAGE ROW COL [N] -> "X Y" window coordinates of a cell's centre
                                      in the N-th (from 0) drawing of that stage
  probe.py FILE centre KEY          -> "X Y" centre of a [x0, y0, x1, y1] rectangle, once drawn
  probe.py FILE item LABEL [S]       -> "X Y" centre of the item LABEL (a menu entry, a checkbox)
                                      in probe["items"], once it is drawn, waiting up to S seconds
  probe.py FILE get KEY              -> a top-level value (JSON)
  probe.py FILE wait KEY VALUE [S]   -> waits until probe[KEY] == VALUE (JSON), up to S seconds
  probe.py FILE atleast KEY N [S]    -> waits until probe[KEY] >= N, up to S seconds
  probe.py FILE contains KEY TEXT [S] -> waits until the text probe[KEY] contains TEXT, up to S seconds
  probe.py FILE inside STAGE [S]     -> waits until a drawing of heatmap STAGE lies whole inside the
                                      centre view (probe["centre"]), up to S seconds
"""
import json
import sys
import time


def load(path):
    for _ in range(50):
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError):
            time.sleep(0.1)  # the app rewrites the file every frame
    raise SystemExit("probe: cannot read " + path)


def main(argv):
    path, cmd = argv[1], argv[2]
    if cmd == "cell":
        stage, row, col = argv[3], int(argv[4]), int(argv[5])
        drawings = [h for h in load(path)["heatmaps"] if h["stage"] == stage]
        copy = int(argv[6]) if len(argv) > 6 else 0
        if copy >= len(drawings):
            raise SystemExit("probe: no drawing %d of heatmap %s on screen (%d drawn)" % (copy, stage, len(drawings)))
        h = drawings[copy]
        r, c = (col, row) if h["transposed"] else (row, col)
        rows, cols = (h["cols"], h["rows"]) if h["transposed"] else (h["rows"], h["cols"])
        x = h["x0"] + (c + 0.5) * (h["x1"] - h["x0"]) / cols
        y = h["y0"] + (r + 0.5) * (h["y1"] - h["y0"]) / rows
        print(int(x), int(y))
        return 0
    if cmd == "centre":
        deadline = time.time() + 5.0
        while True:  # the rectangle is empty until its widget has been drawn once
            x0, y0, x1, y1 = load(path)[argv[3]]
            if x1 > x0 and y1 > y0:
                print(int((x0 + x1) / 2), int((y0 + y1) / 2))
                return 0
            if time.time() > deadline:
                raise SystemExit("probe: %s is empty" % argv[3])
            time.sleep(0.1)
    if cmd == "item":
        deadline = time.time() + (float(argv[4]) if len(argv) > 4 else 10.0)
        while True:  # a menu's items appear a frame after the click that opens it
            rect = load(path).get("items", {}).get(argv[3])
            if rect:
                x0, y0, x1, y1 = rect
                print(int((x0 + x1) / 2), int((y0 + y1) / 2))
                return 0
            if time.time() > deadline:
                raise SystemExit("probe: no item %r drawn" % argv[3])
            time.sleep(0.1)
    if cmd == "get":
        print(json.dumps(load(path)[argv[3]]))
        return 0
    if cmd == "wait":
        key, want = argv[3], json.loads(argv[4])
        deadline = time.time() + (float(argv[5]) if len(argv) > 5 else 10.0)
        while time.time() < deadline:
            got = load(path).get(key)
            if got == want:
                return 0
            time.sleep(0.1)
        print("probe: %s is %s, expected %s" % (key, json.dumps(got), json.dumps(want)))
        return 1
    if cmd == "atleast":
        key, want = argv[3], float(argv[4])
        deadline = time.time() + (float(argv[5]) if len(argv) > 5 else 10.0)
        while time.time() < deadline:
            got = load(path).get(key)
            if got is not None and got >= want:
                return 0
            time.sleep(0.05)
        print("probe: %s is %s, expected at least %s" % (key, json.dumps(got), argv[4]))
        return 1
    if cmd == "contains":
        key, want = argv[3], argv[4]
        deadline = time.time() + (float(argv[5]) if len(argv) > 5 else 10.0)
        while time.time() < deadline:
            got = load(path).get(key)
            if isinstance(got, str) and want in got:
                return 0
            time.sleep(0.1)
        print("probe: %s is %s, expected it to contain %s" % (key, json.dumps(got), json.dumps(want)))
        return 1
    if cmd == "inside":
        stage = argv[3]
        deadline = time.time() + (float(argv[4]) if len(argv) > 4 else 10.0)
        while True:
            p = load(path)
            x0, y0, x1, y1 = p["centre"]
            drawn = [h for h in p["heatmaps"] if h["stage"] == stage]
            if any(h["x0"] >= x0 - 1 and h["x1"] <= x1 + 1 and h["y0"] >= y0 - 1 and h["y1"] <= y1 + 1 for h in drawn):
                return 0
            if time.time() > deadline:
                where = ", ".join(str([h["x0"], h["y0"], h["x1"], h["y1"]]) for h in drawn) or "nowhere"
                print("probe: %s is drawn at %s, the centre view is %s" % (stage, where, p["centre"]))
                return 1
            time.sleep(0.1)
    raise SystemExit("probe: unknown command " + cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
