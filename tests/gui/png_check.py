#!/usr/bin/env python3
"""Checks screenshots made by `attention-lab --screenshot`, with the standard library only.

usage: png_check.py WIDTH HEIGHT FILE.png [FILE.png ...]
Fails (exit 1) unless each file is a PNG of exactly WIDTH x HEIGHT that is not
blank: it must hold many distinct colours and a heatmap-like share of
saturated (coloured, not grey) pixels.
"""
import struct
import sys
import zlib


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height, color_type = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color_type = struct.unpack(">IIBB", body[:10])
            if depth != 8 or color_type not in (2, 6):
                raise ValueError("unexpected PNG format (depth %d, colour type %d)" % (depth, color_type))
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 4 if color_type == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def check(path, want_w, want_h):
    w, h, bpp, rows = read_png(path)
    if (w, h) != (want_w, want_h):
        return "%s: expected %dx%d, found %dx%d" % (path, want_w, want_h, w, h)
    colours, saturated, total = set(), 0, 0
    for y in range(0, h, 3):
        row = rows[y]
        for x in range(0, w, 3):
            r, g, b = row[x * bpp], row[x * bpp + 1], row[x * bpp + 2]
            colours.add((r >> 3, g >> 3, b >> 3))
            saturated += max(r, g, b) - min(r, g, b) > 60
            total += 1
    if len(colours) < 50:
        return "%s: looks blank (%d distinct colours)" % (path, len(colours))
    if saturated < total * 0.01:
        return "%s: no heatmap colours (%.2f%% saturated pixels)" % (path, 100.0 * saturated / total)
    return None


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    want_w, want_h = int(argv[1]), int(argv[2])
    problems = [p for p in (check(f, want_w, want_h) for f in argv[3:]) if p]
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
