#!/usr/bin/env python3
"""Checks PNGs written by Export PNG / --export, with the standard library only.

  png_export_check.py size FILE.png               -> prints "WIDTH HEIGHT"
  png_export_check.py heatmap FILE.png SCALE      -> fails (exit 1) unless FILE is a
      slide-quality heatmap export: white background, a title band of dark text
      at the top, a colour bar (a long run of many distinct saturated colours),
      and no pixel block of a dialog or of the dark on-screen theme.
  png_export_check.py dialog FILE.png             -> passes only if FILE does hold a block of
      a dialog's colours (shows the check above can see one)
  png_export_check.py margins FILE.png SCALE      -> fails unless FILE's content (what is not the
      white background) has a margin of 8*SCALE to 24*SCALE pixels on every side (a crop to
      the content with an even margin, not a slide centred in a larger area)
  png_export_check.py marks FILE.png              -> prints how many pixels have the quiz's "?"
      yellow and the lesson highlight's outline colour: "QUIZ HIGHLIGHT"
  png_export_check.py differ A.png B.png          -> prints how many pixels differ; fails when
      the sizes differ
"""
import sys

from png_check import read_png

# Solid colours of the app's dark theme (window, popup and modal title bar):
# the export is drawn in the light theme, so an 8x8 block of these can only
# come from a copy of the screen.
DIALOG_COLOURS = {
    "window background": (15, 15, 15),
    "popup background": (20, 20, 20),
    "title bar": (41, 74, 122),
    "frame": (29, 47, 73),
}


def pixel(rows, bpp, x, y):
    row = rows[y]
    return row[x * bpp], row[x * bpp + 1], row[x * bpp + 2]


def near(a, b, tol=3):
    return all(abs(p - q) <= tol for p, q in zip(a, b))


def dialog_blocks(w, h, bpp, rows):
    """(name, colour, x, y) of the first 8x8 block of each dialog colour found."""
    found = []
    for name, colour in DIALOG_COLOURS.items():
        for y in range(0, h - 8, 4):
            hit = next((x for x in range(0, w - 8, 4)
                        if all(near(pixel(rows, bpp, x + dx, y + dy), colour) for dx in (0, 7) for dy in (0, 7))), None)
            if hit is not None:
                found.append((name, colour, hit, y))
                break
    return found


def check_heatmap(path, scale):
    w, h, bpp, rows = read_png(path)
    problems = []
    # 1. The background is the light theme's white (a screen copy would be dark).
    for x, y in ((1, 1), (w - 2, 1), (1, h - 2), (w - 2, h - 2)):
        if pixel(rows, bpp, x, y) != (255, 255, 255):
            problems.append("corner (%d, %d) is %s, not white" % (x, y, pixel(rows, bpp, x, y)))
    # 2. The title band: dark text pixels in the top rows, before any cell colour.
    band_top, band_bottom = 8 * scale, 8 * scale + 2 * 20 * scale
    dark = sum(1 for y in range(band_top, min(band_bottom, h)) for x in range(w)
               if max(pixel(rows, bpp, x, y)) < 80)
    if dark < 60 * scale * scale:
        problems.append("no title text in rows %d-%d (%d dark pixels)" % (band_top, band_bottom, dark))
    # 3. The colour bar: a row holding a run of >= 90*scale saturated pixels
    #    with >= 40 distinct colours (a gradient; a row of cells has a handful).
    best_run, best_colours, bar_row = 0, 0, -1
    for y in range(h // 2, h):
        run, colours = 0, set()
        for x in range(w):
            r, g, b = pixel(rows, bpp, x, y)
            if max(r, g, b) - min(r, g, b) > 40:
                run += 1
                colours.add((r, g, b))
                if run >= 90 * scale and len(colours) >= 40 and len(colours) > best_colours:
                    best_run, best_colours, bar_row = run, len(colours), y
            else:
                run, colours = 0, set()
    if bar_row < 0:
        problems.append("no colour bar (no row with a long gradient run in the lower half)")
    # 4. No block of a dialog's or the dark theme's solid colours.
    problems += ["a block of the %s colour %s at (%d, %d)" % hit for hit in dialog_blocks(w, h, bpp, rows)]
    return ["%s: %s" % (path, p) for p in problems], bar_row, best_colours


QUIZ_YELLOW = (250, 200, 40)
HIGHLIGHT = (178, 76, 0)  # gfx::accent(Highlight) in the light theme


def content_box(path):
    w, h, bpp, rows = read_png(path)
    xs, ys = [], []
    for y in range(h):
        for x in range(w):
            if pixel(rows, bpp, x, y) != (255, 255, 255):
                xs.append(x)
                ys.append(y)
    return w, h, (min(xs), min(ys), max(xs), max(ys)) if xs else None


def main(argv):
    if len(argv) >= 4 and argv[1] == "margins":
        scale = int(argv[3])
        w, h, box = content_box(argv[2])
        if not box:
            print("FAIL: %s is blank" % argv[2])
            return 1
        margins = {"left": box[0], "top": box[1], "right": w - 1 - box[2], "bottom": h - 1 - box[3]}
        bad = {k: v for k, v in margins.items() if not 8 * scale <= v <= 24 * scale}
        print("%s: %dx%d, margins %s" % (argv[2], w, h, margins))
        return 1 if bad else 0
    if len(argv) >= 3 and argv[1] == "marks":
        w, h, bpp, rows = read_png(argv[2])
        quiz = sum(1 for y in range(h) for x in range(w) if near(pixel(rows, bpp, x, y), QUIZ_YELLOW, 6))
        outline = sum(1 for y in range(h) for x in range(w) if near(pixel(rows, bpp, x, y), HIGHLIGHT, 6))
        print(quiz, outline)
        return 0
    if len(argv) >= 4 and argv[1] == "differ":
        a, b = read_png(argv[2]), read_png(argv[3])
        if a[:2] != b[:2]:
            print("%s is %dx%d, %s %dx%d" % (argv[2], a[0], a[1], argv[3], b[0], b[1]))
            return 1
        w, h = a[:2]
        print(sum(1 for y in range(h) for x in range(w) if pixel(a[3], a[2], x, y) != pixel(b[3], b[2], x, y)))
        return 0
    if len(argv) >= 3 and argv[1] == "size":
        w, h, _, _ = read_png(argv[2])
        print(w, h)
        return 0
    if len(argv) >= 4 and argv[1] == "heatmap":
        problems, bar_row, colours = check_heatmap(argv[2], int(argv[3]))
        for p in problems:
            print("FAIL:", p)
        if not problems:
            print("%s: title, colour bar (row %d, %d colours), no dialog pixels" % (argv[2], bar_row, colours))
        return 1 if problems else 0
    if len(argv) >= 3 and argv[1] == "dialog":  # the negative control: a screen copy with the dialog open
        found = dialog_blocks(*read_png(argv[2]))
        for hit in found:
            print("%s: a block of the %s colour %s at (%d, %d)" % ((argv[2],) + hit))
        return 0 if found else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
