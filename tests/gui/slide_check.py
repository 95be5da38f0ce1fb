#!/usr/bin/env python3
"""Waits until the app shows lesson step STEP as a finished slide and checks it.

  slide_check.py PROBE STEP [SECONDS] [--least PX] [--walk]

Passes when, in one probe: lesson_step == STEP, the lesson text is not
clipped, and every stage the step lists in "show" is drawn (in "heatmaps")
entirely inside "centre". The layout settles over a frame or two (a heatmap
measures its labels once drawn), so the check is retried on newer frames
until it passes or SECONDS (default 20) run out; then it prints what failed.

--least PX: each stage is drawn, on the page that shows it, with cells of at
least PX pixels, its numbers printed and no label cut (a readable slide).
--walk: a slide in pages is checked page by page from the first (turned back
to with PageUp), turning each with PageDown (xdotool, as a clicker does);
every listed stage must be on one of them. The step's last page is left
showing.
"""
import subprocess
import sys
import time

from probe import load  # the app rewrites the probe every frame: probe.load retries a torn read


def readable(h, least, x0, y0, x1, y1):
    inside = h["x0"] >= x0 - 1 and h["y0"] >= y0 - 1 and h["x1"] <= x1 + 1 and h["y1"] <= y1 + 1
    # Its numbers printed, and its labels whole (a slide has room for words).
    return inside and h.get("cell_px", 0) >= least and h.get("values_printed", 0) > 0 and h.get("labels_cut", 1) == 0


def problems(p, step, least=0.0, page=None, seen=None):
    """What is wrong with this probe as STEP's slide. With `page`, a paged
    slide: only the stages drawn on this page are checked, and those that
    pass go into `seen`."""
    if p.get("lesson_step") != step:
        return ["lesson_step is %s, expected %d" % (p.get("lesson_step"), step)]
    if page is not None and p.get("slide_page") != page:
        return ["slide_page is %s, expected %d" % (p.get("slide_page"), page)]
    out = []
    if p.get("lesson_text_clipped") is not False:
        out.append("the lesson text is clipped")
    x0, y0, x1, y1 = p["centre"]
    if x1 <= x0 or y1 <= y0:
        out.append("the centre %s is empty" % p["centre"])
    for stage in p.get("lesson_show", []):
        drawn = [h for h in p["heatmaps"] if h["stage"] == stage]
        if least > 0 and drawn:
            if any(readable(h, least, x0, y0, x1, y1) for h in drawn):
                if seen is not None:
                    seen.add(stage)
                continue
            if seen is not None and all(h.get("cell_px", 0) < least for h in drawn):
                continue  # repeated smaller for context: another page shows it at full size
            out.append("%s is not readable: cells %s px (at least %.0f), numbers printed %s, labels cut %s" % (
                stage, [round(h.get("cell_px", 0), 1) for h in drawn], least, [h.get("values_printed") for h in drawn],
                [h.get("labels_cut") for h in drawn]))
            continue
        if page is not None and not drawn:
            continue  # on another page
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


def settled(path, step, seconds, check):
    """Waits for a probe of STEP on which `check` finds nothing, drawn at least
    three frames after the slide's page count and room last changed (the room
    a slide asks for is given the next frame). Returns (probe, problems)."""
    deadline = time.time() + seconds
    since, layout = None, None
    while True:
        p = load(path)
        found = check(p)
        now = (p.get("lesson_step"), p.get("slide_pages"), p.get("slide_room"), p.get("slide_page"))
        if now != layout:
            since, layout = p["frame"], now
        if not found and p.get("lesson_step") == step and p["frame"] >= since + 3:
            return p, []
        if time.time() > deadline:
            return p, found or ["fewer than 3 frames drawn on it"]
        time.sleep(0.05)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    least = 0.0
    if "--least" in argv:
        least = float(argv[argv.index("--least") + 1])
        args.remove(argv[argv.index("--least") + 1])
    path, step = args[0], int(args[1])
    seconds = float(args[2]) if len(args) > 2 else 20.0
    if "--walk" not in argv:
        _, found = settled(path, step, seconds, lambda p: problems(p, step, least))
        if found:
            print("step %d: %s" % (step, "; ".join(found)))
            return 1
        return 0
    # From the first page: a slide left on a later page is turned back first.
    p, _ = settled(path, step, seconds, lambda p: [] if p.get("lesson_step") == step else ["not at step %d" % step])
    for back in range(p.get("slide_page", 1) - 1, 0, -1):
        subprocess.run(["xdotool", "key", "Prior"], check=True)
        settled(path, step, seconds, lambda p, back=back: [] if p.get("slide_page") == back else ["not on page %d" % back])
    seen, page = set(), 1
    while True:
        p, found = settled(path, step, seconds, lambda p: problems(p, step, least, page, seen))
        if found:
            print("step %d page %d: %s" % (step, page, "; ".join(found)))
            return 1
        if page >= p.get("slide_pages", 1):
            break
        subprocess.run(["xdotool", "key", "Next"], check=True)
        page += 1
    missing = [s for s in p.get("lesson_show", []) if s not in seen] if least > 0 else []
    if missing:
        print("step %d: %s readable on none of its %d pages" % (step, ", ".join(missing), page))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
