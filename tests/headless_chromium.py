"""Headless Chromium, when the machine has one: the matrix page's tests open the HTML in it
and read back the DOM the browser built."""

from __future__ import annotations

import shutil

#: The browser's path, or None where none is installed (the tests that need it skip).
CHROMIUM = next(
    (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))), None
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
