#!/usr/bin/env python3
"""Waits until the app shows lesson step STEP as a finished slide and checks it.

  slide_check.py PROBE STEP [SECONDS]

Passes when, in one probe: lesson_step == STEP, the lesson text is not
clipped, and every stage the step lists in "show" is drawn (in "heatmaps")
entirely inside "centre". The layout settles over a frame or two (a heatmap
measures its labels once drawn), so the check is retried on newer frames
until it passes or SECONDS (default 20) run out; then it prints what failed.
"""
import sys
import time

from probe import load  # the app rewrites the probe every frame: probe.load retries a torn read


def problems(p, step):
    if p.get("lesson_step") != step:
        return ["lesson_step is %s, expected %d" % (p.get("lesson_step"), step)]
    out = []
    if p.get("lesson_text_clipped") is not False:
        out.append("the lesson text is clipped")
    x0, y0, x1, y1 = p["centre"]
    if x1 <= x0 or y1 <= y0:
        out.append("the centre %s is empty" % p["centre"])
    for stage in p.get("lesson_show", []):
        drawn = [h for h in p["heatmaps"] if h["stage"] == stage]
        if not drawn:
            out.append("%s is not drawn (drawn: %s)" % (stage, sorted({h["stage"] for h in p["heatmaps"]})))
            continue
        # (A window also has the heads' thumbnails in its side panel: one drawing in the centre is the slide's.)
        inside = [h for h in drawn if h["x0"] >= x0 - 1 and h["y0"] >= y0 - 1 and h["x1"] <= x1 + 1 and h["y1"] <= y1 + 1]
        if not inside:
            out.append("%s is not inside the centre [%.0f, %.0f, %.0f, %.0f]: drawn at %s" % (
                stage, x0, y0, x1, y1, ", ".join("[%.0f, %.0f, %.0f, %.0f]" % (h["x0"], h["y0"], h["x1"], h["y1"]) for h in drawn)))
    if p.get("lesson_show") and not p.get("slide"):
        out.append("a step with 'show' is not a slide")
    return out


def main(argv):
    path, step = argv[1], int(argv[2])
    deadline = time.time() + (float(argv[3]) if len(argv) > 3 else 20.0)
    first_frame = None
    while True:
        p = load(path)
        found = problems(p, step)
        if p.get("lesson_step") == step and first_frame is None:
            first_frame = p["frame"]
        # Two frames on the step: the layout has used what it measured.
        if not found and first_frame is not None and p["frame"] >= first_frame + 2:
            return 0
        if time.time() > deadline:
            print("step %d: %s" % (step, "; ".join(found) or "fewer than 2 frames drawn on it"))
            return 1
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
