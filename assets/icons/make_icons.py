#!/usr/bin/env python3
"""Draws the app icon: a causal attention-weights heatmap (4 x 4, viridis, the
masked upper triangle grey) on a dark rounded square. Writes attention-lab.svg
and attention-lab-N.png for the hicolor sizes, with the standard library only
(no rsvg-convert or Inkscape needed). The PNGs are committed; run this again
after changing the design:  python3 assets/icons/make_icons.py
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [16, 22, 24, 32, 48, 64, 128, 256]

# Each row sums to 1, like the softmax of a causal mask: row r attends to tokens 0..r.
WEIGHTS = [
    [1.00],
    [0.30, 0.70],
    [0.15, 0.60, 0.25],
    [0.10, 0.20, 0.15, 0.55],
]
N = len(WEIGHTS)
BACKGROUND = (0x1d, 0x20, 0x33)
MASKED = (0x4a, 0x4e, 0x66)
VIRIDIS = [(0.0, (0x44, 0x01, 0x54)), (0.25, (0x3b, 0x52, 0x8b)), (0.5, (0x21, 0x91, 0x8c)),
           (0.75, (0x5e, 0xc9, 0x62)), (1.0, (0xfd, 0xe7, 0x25))]


def viridis(t):
    for (t0, c0), (t1, c1) in zip(VIRIDIS, VIRIDIS[1:]):
        if t <= t1:
            f = (t - t0) / (t1 - t0)
            return tuple(round(a + (b - a) * f) for a, b in zip(c0, c1))
    return VIRIDIS[-1][1]


def cell_colour(r, c):
    # Weights are shown on a sqrt scale so the small ones are not all the same dark purple.
    return viridis(WEIGHTS[r][c] ** 0.5) if c <= r else MASKED


def layout(size):
    """Rounded square and cell rectangles in pixels of a size x size icon. Small
    sizes snap the cells to whole pixels so they stay crisp."""
    margin = size / 32
    corner = size * 0.19
    inner0, inner1 = size * 0.16, size * 0.84
    gap = max(1.0, size / 48)
    cell = (inner1 - inner0 - (N - 1) * gap) / N
    if size <= 48:
        gap = max(1, round(gap))
        cell = (round(inner1 - inner0) - (N - 1) * gap) // N
        inner0 = (size - (N * cell + (N - 1) * gap)) // 2
    cells = []
    for r in range(N):
        for c in range(N):
            x = inner0 + c * (cell + gap)
            y = inner0 + r * (cell + gap)
            cells.append((x, y, cell, cell, cell_colour(r, c)))
    return (margin, margin, size - 2 * margin, size - 2 * margin, corner), cells


def svg():
    (bx, by, bw, bh, br), cells = layout(64)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">',
             '  <title>Attention Lab</title>',
             '  <rect x="%g" y="%g" width="%g" height="%g" rx="%g" fill="#%02x%02x%02x"/>' % (bx, by, bw, bh, br, *BACKGROUND)]
    for x, y, w, h, col in cells:
        parts.append('  <rect x="%g" y="%g" width="%g" height="%g" rx="%g" fill="#%02x%02x%02x"/>'
                     % (round(x, 3), round(y, 3), round(w, 3), round(h, 3), round(w * 0.12, 3), *col))
    parts.append('</svg>')
    return "\n".join(parts) + "\n"


def inside_rounded(px, py, x, y, w, h, r):
    if px < x or py < y or px >= x + w or py >= y + h:
        return False
    cx = min(max(px, x + r), x + w - r)
    cy = min(max(py, y + r), y + h - r)
    return (px - cx) ** 2 + (py - cy) ** 2 <= r * r


def render(size, samples=4):
    (bx, by, bw, bh, br), cells = layout(size)
    rows = []
    for py in range(size):
        row = bytearray()
        for px in range(size):
            acc = [0.0, 0.0, 0.0, 0.0]  # premultiplied RGB and alpha
            for sy in range(samples):
                for sx in range(samples):
                    x = px + (sx + 0.5) / samples
                    y = py + (sy + 0.5) / samples
                    if not inside_rounded(x, y, bx, by, bw, bh, br):
                        continue
                    col = BACKGROUND
                    for cx, cy, cw, ch, cc in cells:
                        if inside_rounded(x, y, cx, cy, cw, ch, cw * 0.12 if size > 32 else 0):
                            col = cc
                            break
                    acc[0] += col[0]
                    acc[1] += col[1]
                    acc[2] += col[2]
                    acc[3] += 1
            n = samples * samples
            a = acc[3] / n
            if a == 0:
                row += bytes(4)
            else:
                row += bytes([round(acc[0] / acc[3]), round(acc[1] / acc[3]), round(acc[2] / acc[3]), round(a * 255)])
        rows.append(row)
    return png(size, size, rows)


def png(width, height, rows):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff)
    raw = b"".join(b"\x00" + bytes(r) for r in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main():
    with open(os.path.join(HERE, "attention-lab.svg"), "w") as f:
        f.write(svg())
    for size in SIZES:
        with open(os.path.join(HERE, "attention-lab-%d.png" % size), "wb") as f:
            f.write(render(size))


if __name__ == "__main__":
    main()
