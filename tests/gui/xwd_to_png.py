#!/usr/bin/env python3
"""Converts an X window dump (xwd -root) of a 24/32-bit TrueColor screen to PNG.

usage: xwd_to_png.py IN.xwd OUT.png   (standard library only)
Lets the GUI tests photograph what the X server shows, popups and all,
independently of the app's own --screenshot.
"""
import struct
import sys
import zlib


def convert(src, dst):
    data = open(src, "rb").read()
    fields = struct.unpack(">25I", data[:100])
    header_size, version = fields[0], fields[1]
    if version != 7:
        raise SystemExit("xwd_to_png: not an X11 window dump (version %d)" % version)
    width, height = fields[4], fields[5]
    byte_order, bits_per_pixel, bytes_per_line = fields[7], fields[11], fields[12]
    ncolors = fields[19]
    if bits_per_pixel not in (24, 32):
        raise SystemExit("xwd_to_png: expected 24 or 32 bits per pixel, found %d" % bits_per_pixel)
    step = bits_per_pixel // 8  # Xvfb may pack 24-bit pixels in 3 bytes or pad them to 4
    pixels = header_size + ncolors * 12
    raw = bytearray()
    for y in range(height):
        row = data[pixels + y * bytes_per_line: pixels + y * bytes_per_line + width * step]
        raw.append(0)
        pad = step - 3  # MSBFirst puts the padding byte first: X R G B
        if byte_order == 0:  # LSBFirst: B G R (X)
            for x in range(0, len(row), step):
                raw += bytes((row[x + 2], row[x + 1], row[x]))
        else:
            for x in range(0, len(row), step):
                raw += bytes((row[x + pad], row[x + pad + 1], row[x + pad + 2]))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 6)) + chunk(b"IEND", b"")
    open(dst, "wb").write(png)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    convert(sys.argv[1], sys.argv[2])
