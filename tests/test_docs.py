"""The documentation, checked like code (``make docs-check``, marker ``docs``):

- the site is built (``mkdocs build --strict``: a warning, a broken link or a stale generated
  page fails it), its main pages open in Debian's headless Chromium at 1400 x 900 without a
  console error and render text, nothing overflows sideways, and every link inside the site
  (those in the Results pages' raw HTML too, which mkdocs does not check) leads to a page and
  an anchor that exist;
- every example of the guides and the README marked ``<!-- runnable -->`` runs, in order, in a
  fresh folder per page, and prints what its ``<!-- output -->`` block says (as doctest does).

The marker syntax is documented in docs/development/docs.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import html.parser
import http.server
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from fixturegen.harness.adapters import BY_NAME, PEER, AdaptersNotFound, adapters_dir

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.docs

# -- runnable examples ---------------------------------------------------------------------------

FENCE = re.compile(r"^(?P<fence>`{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                   re.M | re.S)
COMMENT = re.compile(r"<!--\s*(?P<text>.*?)\s*-->\s*\n", re.S)


@dataclass
class Example:
    page: str
    line: int
    language: str
    body: str
    title: str | None = None
    exit: int = 0
    needs: list[str] = field(default_factory=list)
    output: str | None = None

    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Page:
    name: str
    setup: list[str]
    examples: list[Example]


def parse(path: Path) -> Page:
    """A page's setup commands and runnable examples, in order."""
    text = path.read_text(encoding="utf-8")
    name = str(path.relative_to(ROOT))
    setup = [m.group(1).strip() for m in re.finditer(r"<!--\s*setup:\s*(.*?)\s*-->", text)]
    examples: list[Example] = []
    for fence in FENCE.finditer(text):
        before = text[:fence.start()]
        marker = None
        for comment in COMMENT.finditer(before):
            if comment.end() == len(before):
                marker = comment.group("text")
        if marker is None or "`" in fence.group("fence")[3:]:
            continue
        words = marker.split()
        info = fence.group("info").strip()
        language = info.split()[0] if info else ""
        line = before.count("\n") + 1
        if words[0] == "output":
            assert examples, f"{name}:{line}: an output block with no example before it"
            examples[-1].output = fence.group("body")
            continue
        if words[0] != "runnable":
            continue
        title = re.search(r'title="([^"]+)"', info)
        example = Example(name, line, language, fence.group("body"),
                          title.group(1) if title else None)
        for word in words[1:]:
            key, _, value = word.partition("=")
            if key == "exit":
                example.exit = int(value)
            elif key == "needs":
                example.needs = value.split(",")
            else:
                raise AssertionError(f"{name}:{line}: unknown option {word!r}")
        assert language in ("sh", "bash") or example.title, (
            f"{name}:{line}: a runnable {language or 'plain'} block needs title=\"FILE\"")
        examples.append(example)
    return Page(name, setup, examples)


def pages_with_examples() -> list[Page]:
    paths = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    return [page for page in map(parse, paths) if page.examples]


def matches(expected: str, actual: str) -> bool:
    """Each expected line matches an actual line in order; ``...`` in a line is any text, a
    line of ``...`` alone any number of lines (doctest's ELLIPSIS)."""
    pattern = ""
    for line in expected.rstrip("\n").split("\n"):
        if line.strip() == "...":
            pattern += r"(?:[^\n]*\n)*?"
        else:
            parts = [re.escape(part) for part in line.rstrip().split("...")]
            pattern += "[^\n]*?".join(parts) + r"[ \t]*\n"
    lines = "\n".join(line.rstrip() for line in actual.rstrip("\n").split("\n")) + "\n"
    return re.fullmatch(pattern, lines) is not None


def missing(needs: list[str]) -> str | None:
    """Why an example that needs these adapters cannot run here (None: it can)."""
    try:
        folder = adapters_dir()
    except AdaptersNotFound as exc:
        return str(exc)
    for name in needs:
        if name == "fixture-peer":
            if not (folder / PEER).exists():
                return f"the fixture peer is not built in {folder} (make adapters)"
        elif not BY_NAME[name].built(folder):
            return f"adapter {name} is not built in {folder} (make adapters, or set " \
                   "FIXTUREGEN_ADAPTERS to a folder where it is)"
    return None


def run(command: str, folder: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONUNBUFFERED": "1", "COLUMNS": "100"}
    if "FIXTUREGEN_ADAPTERS" not in env:
        env["FIXTUREGEN_ADAPTERS"] = str(ROOT / "adapters")
    return subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=folder, env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout, check=False)


PAGES = pages_with_examples()


def test_the_guides_have_runnable_examples() -> None:
    names = {page.name for page in PAGES}
    for guide in ("corpus", "test-assets", "validate", "adapter", "fuzzing", "import"):
        assert f"docs/guides/{guide}.md" in names, f"docs/guides/{guide}.md runs no example"
    assert "README.md" in names
    assert sum(len(p.examples) for p in PAGES) >= 25


def test_the_output_matcher() -> None:
    assert matches("a\n...\nc\n", "a\nb\nb2\nc\n")
    assert matches("wrote ... fixtures\n", "wrote 8 fixtures\n")
    assert not matches("a\nc\n", "a\nb\nc\n")  # no skipping without ...
    assert not matches("wrote 9 fixtures\n", "wrote 8 fixtures\n")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_runnable_examples(page: Page, tmp_path: Path) -> None:
    (tmp_path / "adapters").symlink_to(ROOT / "adapters")
    for command in page.setup:
        done = run(command, tmp_path)
        assert done.returncode == 0, f"{page.name}: setup {command!r}:\n{done.stdout}"
    for example in page.examples:
        if example.needs and (why := missing(example.needs)):
            pytest.skip(f"{example.where()} and the examples after it need "
                        f"{', '.join(example.needs)}: {why}")
        if example.language not in ("sh", "bash"):
            assert example.title is not None
            (tmp_path / example.title).write_text(example.body, encoding="utf-8")
            continue
        done = run(example.body, tmp_path)
        shown = f"{example.where()}: $ {shlex.quote(example.body.strip())}\n{done.stdout}"
        assert done.returncode == example.exit, (
            f"exit {done.returncode}, the page says {example.exit}\n{shown}")
        if example.output is not None:
            assert matches(example.output, done.stdout), (
                f"the output is not what the page shows:\n--- the page\n{example.output}"
                f"--- the command\n{shown}")


# -- the site in a browser ------------------------------------------------------------------------

MAIN_PAGES = ["index.html", "guides/corpus.html", "guides/validate.html",
              "guides/adapter.html", "reference/cli.html", "reference/checks.html",
              "reference/cases/invalid.html", "reference/formats/manifest.html",
              "results/index.html", "results/matrix.html", "results/findings.html",
              "results/handshakes.html", "guides/test-assets.html", "guides/versions.html",
              "guides/mutation.html", "reference/formats/mutation.html", "guides/import.html",
              "results/cases/index.html", "results/cases/invalid.self-signature-corrupted.html"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as ``make docs`` builds it (strict), into a folder of this test
    process's own (two test processes may build at once)."""
    if not shutil.which("mkdocs", path=str(BIN)):
        pytest.fail("mkdocs is not installed: make docs-check installs it (.[docs])")
    folder = tmp_path_factory.mktemp("site")
    done = subprocess.run([str(BIN / "mkdocs"), "build", "--strict", "--site-dir", str(folder)],
                          cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return folder


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """The site over HTTP on 127.0.0.1 (a port from the OS), as a reader's web server or
    ``mkdocs serve`` would give it (search needs a web worker, which file:// does not run)."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)
            if key == "href" and value and tag == "a":
                self.links.append(value)


def test_every_link_inside_the_site_resolves(site: Path) -> None:
    parsed: dict[Path, _Links] = {}
    for page in site.rglob("*.html"):
        p = _Links()
        p.feed(page.read_text(encoding="utf-8"))
        parsed[page] = p
    broken: list[str] = []
    for page, p in parsed.items():
        for link in p.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            path = unquote(parts.path)
            if path.startswith("/"):  # 404.html links from the site's root
                target = site / path.lstrip("/")
            else:
                target = (page.parent / path).resolve() if path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html" and (
                    unquote(parts.fragment) not in parsed[target].ids):
                broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert not broken, "\n".join(broken[:40])


def test_the_main_pages_render_in_chromium(site: Path, tmp_path: Path) -> None:
    """Each page at 1400 x 900; its screenshot is kept in $FIXTUREGEN_SHOTS when set."""
    shots = Path(os.environ.get("FIXTUREGEN_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    if not Path("/usr/bin/chromium").exists():
        pytest.fail("/usr/bin/chromium is missing: apt-get install -y chromium (.ci/run does)")
    from tests.browser import browser

    async def visit(base: str) -> list[str]:
        problems: list[str] = []
        async with browser() as b:
            for name in MAIN_PAGES:
                report = await b.open(f"{base}/{name}")
                (shots / name.replace("/", "_")).with_suffix(".png").write_bytes(
                    report.screenshot)
                where = f"{name}:"
                problems += [f"{where} {e}" for e in report.errors]
                if report.text_length < 200 or not report.headings:
                    problems.append(f"{where} nothing rendered ({report.text_length} "
                                    f"characters, headings {report.headings})")
                if not report.title.endswith("fixturegen"):
                    problems.append(f"{where} title {report.title!r}")
                if report.width > 1400 or report.overflow:
                    problems.append(f"{where} {report.overflow} elements wider than the "
                                    f"window (page {report.width} px)")
        return problems

    with serve(site) as base:
        problems = asyncio.run(visit(base))
    assert not problems, "\n".join(problems)


PHONE = 390
PHONE_PAGES = ["index.html", "guides/corpus.html", "guides/library.html",
               "explain/handshakes.html", "reference/formats/harness-protocol.html",
               "reference/cli.html", "reference/adapters.html", "results/index.html",
               "results/matrix.html", "results/cases/invalid.self-signature-corrupted.html"]


def test_the_main_pages_fit_a_phone(site: Path) -> None:
    """At 390 px wide no page scrolls sideways: a wide table or code block scrolls in its own
    box, a diagram shrinks to the column."""
    if not Path("/usr/bin/chromium").exists():
        pytest.fail("/usr/bin/chromium is missing: apt-get install -y chromium (.ci/run does)")
    from tests.browser import browser

    async def visit(base: str) -> list[str]:
        problems: list[str] = []
        async with browser() as b:
            for name in PHONE_PAGES:
                report = await b.open(f"{base}/{name}", width=PHONE)
                if report.width > PHONE or report.overflow:
                    problems.append(f"{name}: {report.overflow} elements wider than "
                                    f"{PHONE} px (page {report.width} px)")
        return problems

    with serve(site) as base:
        problems = asyncio.run(visit(base))
    assert not problems, "\n".join(problems)


class _Published(http.server.SimpleHTTPRequestHandler):
    """The site published under /docs/fixturegen/, every missing address answered with its
    404 page, as a web server does."""

    prefix = "/docs/fixturegen/"
    site = Path()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def translate_path(self, path: str) -> str:
        path = urlsplit(path).path
        if not path.startswith(self.prefix):
            return str(self.site / "no such file")
        return super().translate_path("/" + path[len(self.prefix):])

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        body = (self.site / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def test_the_404_page_works_under_a_subpath(site: Path) -> None:
    """The 404 page loads nothing by a path (it is shown at any address) and its home link
    leads to the site's root, wherever the site is published."""
    page = (site / "404.html").read_text(encoding="utf-8")
    assert "<link rel=\"stylesheet\"" not in page and "<script src" not in page
    handler = type("Handler", (_Published,), {"site": site})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    from tests.browser import browser

    async def home(base: str) -> str:
        async with browser() as b:
            await b.open(f"{base}/docs/fixturegen/guides/no-such-page.html")
            for _ in range(300):  # until its look-up is over (30 s at most, as a load)
                done = json.loads(await b.evaluate("JSON.stringify([document.body.dataset.root"
                                                   ", document.getElementById('home').href])"))
                if done[0] is not None:
                    break
                await asyncio.sleep(0.1)
            return str(done[1])

    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        assert asyncio.run(home(base)) == f"{base}/docs/fixturegen/index.html"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
