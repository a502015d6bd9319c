"""Looks at the built docs site the way a reader would: serves it on 127.0.0.1 (a free port),
has a headless Chromium render the home page and a guide, saves a screenshot of each, and fails
when a page renders blank or without its text.

Usage: docs_look.py CHROMIUM SITE_FOLDER OUT_FOLDER  (``make docs-look`` passes them)
"""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from PIL import Image

#: The pages looked at, each with a text its rendered page must hold.
PAGES = {
    "index": ("", "Every piece of state has a deadline"),
    "guide-sessions": ("guides/sessions/", "Late events"),
}
#: A rendered page has text, code and a header in several colours; a blank one has one or two.
MIN_COLOURS = 64
#: The share of the screen one colour may cover (a page's white background), at most.
MAX_BACKGROUND = 0.97
SIZE = (1280, 1600)


def main(chromium: str, site: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    handler = functools.partial(_Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems = []
    try:
        for name, (path, text) in PAGES.items():
            shot = out / f"{name}.png"
            problems += look(chromium, base + path, shot, text)
    finally:
        server.shutdown()
    for line in problems:
        print(f"docs-look: {line}", file=sys.stderr)
    if not problems:
        print(f"docs-look: {len(PAGES)} pages rendered; screenshots in {out}/")
    return 1 if problems else 0


def look(chromium: str, url: str, shot: Path, text: str) -> list[str]:
    """The problems of the page at ``url`` (none: it rendered), its screenshot in ``shot``."""
    flags = [
        chromium,
        "--headless",
        "--no-sandbox",  # as root, Chromium refuses to start with its sandbox
        "--disable-gpu",
        "--hide-scrollbars",
        "--virtual-time-budget=5000",
        f"--window-size={SIZE[0]},{SIZE[1]}",
    ]
    shot.unlink(missing_ok=True)
    run = subprocess.run([*flags, f"--screenshot={shot}", url], capture_output=True, timeout=120)
    if not shot.exists():
        return [f"{url}: no screenshot (exit {run.returncode}): {run.stderr.decode()[-500:]}"]
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, timeout=120)
    problems = []
    if text not in dom.stdout.decode("utf-8", "replace"):
        problems.append(f"{url}: the rendered page lacks {text!r}")
    with Image.open(shot) as image:
        rgb = image.convert("RGB")
        colours = rgb.getcolors(maxcolors=SIZE[0] * SIZE[1]) or []
        if rgb.size != SIZE:
            problems.append(f"{shot}: {rgb.size[0]}x{rgb.size[1]}, not {SIZE[0]}x{SIZE[1]}")
    top = max((count for count, _ in colours), default=0) / (SIZE[0] * SIZE[1])
    if len(colours) < MIN_COLOURS or top > MAX_BACKGROUND:
        problems.append(f"{shot}: looks blank ({len(colours)} colours, {top:.0%} of it one colour)")
    return problems


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
