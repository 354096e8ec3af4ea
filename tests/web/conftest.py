"""Fixtures for the web UI's browser tests: `ragdown serve` as a real process and Debian's Chromium
driven by Playwright. Tests that need a browser are skipped, with the reason, when Chromium or the
`playwright` package is missing; the run then ends with a line counting them (tests/conftest.py)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import struct
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from tests.conftest import ServeProcess, start_serve, write

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Playwright
    from playwright.sync_api._context_manager import PlaywrightContextManager

CHROMIUM = Path(os.environ.get("RAGDOWN_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install playwright)"
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    return None


def png(width: int, height: int) -> bytes:
    """A small solid red PNG."""
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


@dataclass
class UiServer:
    url: str
    token: str
    docs: Path
    process: ServeProcess

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.request(method, f"{self.url}{path}", headers=headers, timeout=30, **kwargs)

    def stop(self) -> None:
        self.process.stop()


def start_ui_server(home: Path, docs: Path, *, secure_local_net: bool = False, **env: str) -> UiServer:
    """`ragdown serve` on a free loopback port with the `hash` embedder and a random token (none with
    `secure_local_net`), once its first sync is done."""
    token = "" if secure_local_net else secrets.token_hex(16)
    auth = {"SECURE_LOCAL_NET": "true"} if secure_local_net else {"RAGDOWN_TOKEN": token}
    extra = {"RAGDOWN_DOCS_DIR": str(docs), "RAGDOWN_DATA_DIR": str(home / "data"), **auth, **env}
    process = start_serve(home, extra, timeout=90)
    server = UiServer(process.url, token, docs, process)
    try:
        process.wait_synced(90)
    except AssertionError:
        server.stop()
        raise
    return server


def sample_docs(docs: Path) -> None:
    """The folders the UI tests read and change; each test that writes has its own documents."""
    write(
        docs,
        "work/Home.md",
        "---\ntitle: Home\ntags: [index]\n---\n# Home\n\n"
        "Welcome. See [[Backups#Restore|restoring]], [[notes/Plan]] and [[Nowhere]].\n\n"
        "![[diagram.png]]\n\n![[Backups#Restore]]\n\nA #project/alpha note.\n",
    )
    write(
        docs,
        "work/Backups.md",
        "# Backups\n\nBackups run nightly with restic.\n\n## Restore\n\n"
        "Run restic restore latest twice to be sure.\n\n## Rotation\n\nKeep seven daily snapshots.\n",
    )
    write(docs, "work/notes/Plan.md", "# Plan\n\nThe plan links back to [Home](../Home.md).\n")
    write(docs, "work/diagram.png", png(40, 20))
    write(docs, "work/old.md", "# Old embedder\n\nWe used bge-small.\n")
    write(
        docs,
        "work/new.md",
        '---\ntitle: "New embedder"\nsupersedes: ["old.md"]\n---\n# New embedder\n\nWe use granite-small.\n',
    )
    write(
        docs,
        "work/Hostile.md",
        "# Hostile\n\n<script>window.__pwned = 1</script>\n\n"
        '<img src="x" onerror="window.__pwned = 2">\n\n[click me](javascript:window.__pwned=3)\n',
    )
    for name in ("Edit", "ConflictOver", "ConflictDiscard", "Guard", "MoveMe", "DeleteMe"):
        write(docs, f"work/{name}.md", f"# {name}\n\nThe first version of {name}.\n")
    write(
        docs,
        "work/Rich.md",
        "# Rich\n\n```mermaid\ngraph TD\n  A[Start] --> B[End]\n```\n\n"
        "Inline $e^{i\\pi} + 1 = 0$ and display:\n\n$$\n\\int_0^1 x\\,dx\n$$\n\n"
        "```python\ndef area(r):\n    return 3.14 * r * r\n```\n",
    )
    write(docs, "work/Merge.md", "# Merge\n\nFirst paragraph.\n\nMiddle.\n\nLast paragraph.\n")
    write(docs, "work/Linker.md", "# Linker\n\nSee [[MoveMe]] for details.\n")
    write(docs, "work/Dangling.md", "# Dangling\n\nTo write: [[Brand new note]].\n")
    write(docs, "other/a.md", "# Other A\n\nSomething else entirely.\n")
    write(docs, "other/.ragdown.json", json.dumps({"title": "Other things"}))
    write(docs, "loose.md", "# Loose\n")


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    reason = browser_missing()
    if reason:
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("ui")
    docs = home / "docs"
    docs.mkdir()
    sample_docs(docs)
    server = start_ui_server(home, docs)
    yield server
    server.stop()


class _Chromium:
    """One Playwright driver and one Chromium for this test process, started by the first browser test module
    and closed when the process ends: a launch costs ~1.5 s of CPU and, on a loaded machine, many seconds.
    Each test gets its own browser context (its own storage, cookies and permissions), so nothing of a
    test's browser state reaches another.

    The sync API keeps its event loop suspended in this thread and marks it as the thread's running loop
    after each call; an async test that ran next (`asyncio.run`, anyio) would then refuse to start. So the
    loop is the running one only while a browser test module runs (`lend`), and none between modules."""

    def __init__(self) -> None:
        self.manager: PlaywrightContextManager | None = None
        self.playwright: Playwright | None = None
        self.launched: Browser | None = None

    @contextmanager
    def lend(self) -> Iterator[Browser]:
        self._resume()
        try:
            if self.launched is None or not self.launched.is_connected():
                self.launched = self._playwright().chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
                )
            yield self.launched
        finally:
            asyncio._set_running_loop(None)

    def close(self) -> None:
        if self.manager is None:
            return
        self._resume()
        try:
            if self.launched is not None and self.launched.is_connected():
                self.launched.close()
        finally:
            self.manager.__exit__()  # ends the driver; its loop is closed and no longer running here
            asyncio._set_running_loop(None)
            self.manager = self.playwright = self.launched = None

    def _playwright(self) -> Playwright:
        if self.playwright is None:
            from playwright.sync_api import sync_playwright

            self.manager = sync_playwright()
            self.playwright = self.manager.__enter__()
        return self.playwright

    def _resume(self) -> None:
        """Make the driver's loop this thread's running loop again, as the sync API left it."""
        if self.manager is not None and not self.manager._loop.is_closed():
            asyncio._set_running_loop(self.manager._loop)


@pytest.fixture(scope="session")
def _chromium() -> Iterator[_Chromium]:
    chromium = _Chromium()
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def browser(_chromium: _Chromium) -> Iterator[Browser]:
    """This test process's Chromium (`_Chromium`), lent to one test module at a time."""
    reason = browser_missing()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import expect

    # An assertion waits as long as an action does (`set_default_timeout` below), not playwright's 5 s: on a
    # loaded machine the first mermaid diagram alone (5 MB of JavaScript to parse) took longer.
    expect.set_options(timeout=15_000)
    with _chromium.lend() as launched:
        yield launched


OpenPage = Callable[..., "Page"]


@pytest.fixture
def open_page(browser: Browser) -> Iterator[OpenPage]:
    """`open_page(server, path="/", token=True)`: a fresh browser context (its own localStorage),
    the token already stored unless `token` is False or a string to store instead. Uncaught page
    errors fail the test."""
    contexts: list[BrowserContext] = []
    errors: list[str] = []

    def open_(server: UiServer, path: str = "/", token: bool | str = True) -> Page:
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, base_url=server.url)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
        stored = (server.token if token is True else token) or ""
        if stored:
            context.add_init_script(f"localStorage.setItem('ragdown.token', {json.dumps(stored)})")
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(path)
        return page

    yield open_
    for context in contexts:
        context.close()
    assert not errors, f"uncaught errors in the page: {errors}"
