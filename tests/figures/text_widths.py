#!/usr/bin/python3
"""text_widths.py SVG_CHECK: the layout's text widths hold in the real renderer.

Renders texts of the kinds the figures print (captions, tick labels, Greek, minus signs,
superscripts, the widest and narrowest glyphs, kerned pairs) alone with rsvg-convert, at the
sizes the figures use, finds the ink, and requires it to start at the text's x and end within
report::text_width (asked from `svg_check --width`), half a pixel of antialiasing allowed. Exit
77 (skipped) when rsvg-convert is not installed.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

TEXTS = [
    "Slope of log Δ(n) against log n over the defined rows: −1.000 ± 1.1e−05 (a measurement).",
    "0123456789 −0.5 2500 1e−5",
    "input length n (symbols, eos included) (log scale)",
    "(c) CE equals its floor 1 − log2(1 + η) at every n ≥ 8; K(n)/n ≤ 9.18e+230",
    "WWWWMMMMmmmm%%%@@@",
    "iiiilllljjjj..,,||!!",
    "AVAVAVTyTyLTLTfjfjffWAYA",
    "n·Δ(n) (Lemma 5: at most K) — 5×10 ε σ ρ … √",
    "'quoted' \"double\" [brackets] {braces} <less> & more",
]
SIZES = [8.25, 11, 15]


def decode_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    i, idat = 8, b""
    while i < len(data):
        length, = struct.unpack(">I", data[i:i + 4])
        kind, chunk = data[i + 4:i + 8], data[i + 8:i + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6), "unexpected PNG format"
        elif kind == b"IDAT":
            idat += chunk
        i += 12 + length
    raw, bpp = zlib.decompress(idat), (4 if colour == 6 else 3)
    stride, rows, prev, at = width * bpp, [], bytearray(width * bpp), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, bpp, rows


def main():
    check = sys.argv[1]
    renderer = os.environ.get("ATTNPROP_SVG_RENDERER", "rsvg-convert")
    if not renderer or shutil.which(renderer) is None:
        print(f"SKIPPED: the SVG renderer '{renderer}' is not installed (Debian package librsvg2-bin)")
        return 77
    failures, x0 = 0, 10
    with tempfile.TemporaryDirectory() as work:
        svg, png = os.path.join(work, "t.svg"), os.path.join(work, "t.png")
        for size in SIZES:
            for text in TEXTS:
                escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                with open(svg, "w", encoding="utf-8") as f:
                    f.write('<svg xmlns="http://www.w3.org/2000/svg" width="900" height="40" '
                            'font-family="DejaVu Sans, sans-serif"><rect width="100%" height="100%" '
                            f'fill="white"/><text x="{x0}" y="28" font-size="{size}">{escaped}</text></svg>')
                subprocess.run([renderer, "--output", png, svg], check=True)
                width, bpp, rows = decode_png(png)
                ink = [x for r in rows for x in range(width) if r[x * bpp] < 250]
                est = float(subprocess.run([check, "--width", str(size), text], check=True,
                                           capture_output=True, text=True).stdout)
                left, right = min(ink), max(ink) + 1
                ok = left >= x0 - 0.5 and right <= x0 + est + 0.5
                if not ok:
                    failures += 1
                print(f"{'ok  ' if ok else 'FAIL'} size {size}: ink {left}..{right}, layout "
                      f"{x0}..{x0 + est:.1f}: {text}")
    print(f"{failures} text{'s' if failures != 1 else ''} wider than the layout measures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
