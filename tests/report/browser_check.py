#!/usr/bin/env python3
"""Opens kernel reports in a real browser (Debian's chromium, headless; docs/report.md).

For each FILE.tl:TARGET this writes the report, renders it with

    chromium --headless --screenshot=PAGE.png --enable-logging=stderr --v=0 file://PAGE.html

and fails when the browser logs any console message (a script error, a resource that did not
load: the page has no console output of its own) or when the screenshot is blank (the PNG's
pixels, decoded here with zlib, have almost no variance), or when clicking a source line's number
(from a script appended to the page, read back with --dump-dom in the same run) does not
highlight that line's output lines. Exits 77 (CTest's SKIP_RETURN_CODE)
only when no chromium is installed; scripts/install-deps.sh installs it, so CI never skips.

  browser_check.py --tlc build/tlc [--work DIR] [--keep-png DIR] FILE.tl:TARGET...
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def png_pixels(path):
    """(width, height, channels, rows of bytes) of an 8-bit non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace:
                raise ValueError(f"PNG depth {depth}, interlace {interlace}: not decoded here")
            channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, channels, rows


def variance(path):
    """Variance of the pixels' grey level, and the share of pixels that are not the commonest."""
    width, height, channels, rows = png_pixels(path)
    total = n = sq = 0
    counts = {}
    for line in rows[::2]:
        for x in range(0, width * channels, channels * 2):
            g = sum(line[x:x + min(channels, 3)]) // min(channels, 3)
            total += g
            sq += g * g
            n += 1
            counts[g] = counts.get(g, 0) + 1
    mean = total / n
    return sq / n - mean * mean, 1 - max(counts.values()) / n


# Appended to a copy of the page: clicks the first mapped source line's number, as a reader
# would, and records how many output lines the page's script highlighted.
CLICK = """<script>(function () {
  var line = document.querySelector('.ln[data-out]');
  if (!line) { document.body.setAttribute('data-clicked', 'none'); return; }
  line.querySelector('a.no').click();
  var lit = document.querySelectorAll('.ln.hl[data-src="' + line.getAttribute('data-line') + '"]').length;
  document.body.setAttribute('data-clicked', line.getAttribute('data-out') + '/' + lit);
})();</script>"""


def with_click(page):
    """A copy of the page with CLICK appended."""
    copy = page[:-5] + ".click.html"
    with open(page, encoding="utf-8") as f:
        text = f.read()
    with open(copy, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", CLICK + "</body>"))
    return copy


def click_result(dom):
    """The page's own script highlighted, on the click, every output line of the source line."""
    m = re.search(r'data-clicked="([^"]*)"', dom)
    if not m:
        return ["the click check did not run (no data-clicked in the DOM)"]
    want, _, got = m.group(1).partition("/")
    if want == "none" or want != got:
        return [f"clicking a source line highlighted {got or 0} output lines, not {want}"]
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tlc", required=True)
    ap.add_argument("--work")
    ap.add_argument("--keep-png", help="copy each screenshot here")
    ap.add_argument("--window", default="1280,900")
    ap.add_argument("cases", nargs="+", help="FILE.tl:TARGET")
    args = ap.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("SKIP: no chromium (scripts/install-deps.sh installs it)")
        return SKIP
    work = args.work or tempfile.mkdtemp(prefix="tlc-browser-")
    os.makedirs(work, exist_ok=True)
    failed = 0
    for case in args.cases:
        tl, target = case.split(":")[:2]
        name = f"{os.path.basename(tl)[:-3]}-{target}"
        page = os.path.abspath(os.path.join(work, name + ".html"))
        png = os.path.abspath(os.path.join(work, name + ".png"))
        errors = []
        r = subprocess.run([args.tlc, tl, f"--target={target}", "-o", os.path.join(work, name + ".out"),
                            f"--report={page}"], capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(f"tlc failed: {r.stderr[-1000:]}")
        else:
            if os.path.exists(png):
                os.remove(png)
            profile = tempfile.mkdtemp(prefix="profile-", dir=work)
            # One browser run: the page (with the click script appended) rendered, logged,
            # screenshot and its DOM dumped after the click.
            clicked = with_click(page)
            cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   "--disable-extensions", "--disable-background-networking", "--disable-sync",
                   f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                   f"--window-size={args.window}", f"--screenshot={png}", "--dump-dom", "file://" + clicked]
            try:
                b = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
                console = [l for l in b.stderr.splitlines() if ":CONSOLE" in l]
                if console:
                    errors.append("console messages: " + " | ".join(console[:5]))
                errors += click_result(b.stdout)
                if not os.path.exists(png):
                    errors.append(f"no screenshot (exit {b.returncode}): {b.stderr[-800:]}")
                else:
                    var, share = variance(png)
                    if var < 50 or share < 0.02:
                        errors.append(f"blank screenshot: grey variance {var:.1f}, {share:.1%} of pixels not the "
                                      f"background")
                    else:
                        print(f"     {name}: grey variance {var:.0f}, {share:.0%} of pixels drawn")
                    if args.keep_png:
                        os.makedirs(args.keep_png, exist_ok=True)
                        shutil.copy(png, os.path.join(args.keep_png, name + ".png"))
            except subprocess.TimeoutExpired:
                errors.append("chromium took over 90 s")
            shutil.rmtree(profile, ignore_errors=True)
        print(f"{'FAIL' if errors else 'ok  '} {name}")
        for e in errors:
            print("     " + e)
        failed += bool(errors)
    print(f"{len(args.cases) - failed} of {len(args.cases)} pages render")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
