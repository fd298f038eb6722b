"""Make docs/view.png: the page ``wireinspect view`` writes for the damaged sample, as headless
chromium (Debian's, driven by Playwright) shows it, opened on its first problem.

    python docs/make_view_screenshot.py        # from the repository's root
"""

import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]

with tempfile.TemporaryDirectory() as tmp:
    page_path = Path(tmp) / "damaged.html"
    subprocess.run([sys.executable, "-m", "wireinspect", "view", "samples/damaged/00000000000000000000.log",
                    "-o", str(page_path)], check=False)
    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(str(Path(tmp) / "profile"), executable_path="/usr/bin/chromium",
                                                    headless=True, args=ARGS, viewport={"width": 1400, "height": 820},
                                                    offline=True)
        page = ctx.new_page()
        page.goto(page_path.as_uri())
        page.wait_for_selector("body[data-ready='1']")
        page.screenshot(path="docs/view.png")
        ctx.close()
