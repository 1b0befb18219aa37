"""Checks that rendered PNG images are not blank (run with /usr/bin/python3; needs only the standard library).

usage: python3 check_png.py MIN_VARIANCE FILE...
Decodes each 8-bit RGB or RGBA, non-interlaced PNG (what ParaView writes) and passes when, in the middle 70 % of its
width (left of the colour bar, right of the orientation axes, so that those alone cannot pass), the variance of the
grey levels (0-255) is above MIN_VARIANCE and more than 0.1 % of the pixels differ from the most common colour (the
background): a blank or single-colour image has variance 0.
"""
import struct
import sys
import zlib
from collections import Counter


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError("unsupported PNG (depth %d, colour type %d, interlace %d)" % (depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
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
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    threshold = float(sys.argv[1])
    failed = False
    for path in sys.argv[2:]:
        try:
            width, height, bpp, rows = read_png(path)
        except (OSError, ValueError, zlib.error) as e:
            print("FAIL: %s: %s" % (path, e))
            failed = True
            continue
        grey, colours = [], Counter()
        for line in rows:
            for x in range(int(0.15 * width), int(0.85 * width)):
                r, g, b = line[x * bpp:x * bpp + 3]
                grey.append((r + g + b) / 3.0)
                colours[(r, g, b)] += 1
        n = len(grey)
        mean = sum(grey) / n
        variance = sum((v - mean) ** 2 for v in grey) / n
        foreground = 1.0 - colours.most_common(1)[0][1] / n
        ok = variance > threshold and foreground > 1e-3
        print("%s: %s: %dx%d, grey variance %.1f (threshold %g), %.2f %% of pixels not background" %
              ("PASS" if ok else "FAIL", path, width, height, variance, threshold, 100.0 * foreground))
        failed |= not ok
    if len(sys.argv) < 3:
        print("FAIL: no image given")
        failed = True
    sys.exit(1 if failed else 0)


main()
