"""Reports escape Markdown from any input text (fixturegen/markdown.py): ids, descriptions,
rules, errors an implementation printed, names and seeds never end a line, a table cell or a
code span, and never become a link, an image, a heading or an HTML tag; the HTML pages stay
escaped (Jinja autoescape).

The reports are rendered with markdown-it (CommonMark with GFM tables, raw HTML allowed, as a
forge would) and the HTML is checked: no tag, link or heading from the input, every table row
as many cells as its header."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from fixturegen.markdown import code, md

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ("x|y `z` ``w`` [l](javascript:alert(1)) ![i](http://e/x.png) <script>alert(1)"
           "</script> <img src=x onerror=alert(1)>\n# Heading\r\n| a | b |\u2028*e* _u_ "
           "~~s~~ &lt;b&gt; \\| <!-- c --> `")


def render(text: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(
        text)


def assert_inert(html: str, headings: int | None = None) -> None:
    for bad in ("<script", "<img", "href=\"javascript", "href=\"http://e", "<!--", "<del>",
                "<s>", "<em>e</em>", "<em>u</em>", ">Heading"):
        assert bad not in html, bad
    if headings is not None:
        assert len(re.findall(r"<h[1-6]>", html)) == headings
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        head = len(re.findall(r"<th[ >]", table.split("</thead>")[0]))
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[1], re.S):
            assert len(re.findall(r"<td[ >]", row)) == head, row


def test_md_and_code_keep_text_inert() -> None:
    html = render(f"{md(HOSTILE)}\n\n| a | b |\n|---|---|\n| {md(HOSTILE)} | {code(HOSTILE)} |\n")
    assert_inert(html, headings=0)
    assert html.count("<code>") == 1  # the span made by code(), nothing from the text
    assert "\n" not in md("a\nb\rc\u2028d") and "\n" not in code("a\nb")
    assert code("``a`") == "``` ``a` ```"


def _hostile_run(results_dir: Path, out: Path) -> Path:
    """A copy of a real run's results whose catalogue texts and the implementation's errors
    are hostile."""
    data = json.loads((results_dir / "results.json").read_text())
    for entry in data["catalogue"]:
        entry["description"] = HOSTILE
        entry["rule"] = HOSTILE
        entry["importance"] = None
    for impl in data["implementations"]:
        impl["version"] = HOSTILE
        for case in impl["cases"]:
            case["error"] = HOSTILE
    data["generator"] = HOSTILE
    data["seed"] = HOSTILE
    out.mkdir()
    (out / "results.json").write_text(json.dumps(data))
    return out


@pytest.fixture(scope="module")
def run(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "run"
    done = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "run", "--corpus",
                           str(corpus), "--out", str(out), "--no-interop", "--no-transcripts",
                           "--name", "lenient", "--", sys.executable,
                           str(ROOT / "tests/adapters/lenient.py")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.slow
def test_findings_and_summary_escape_the_input(run: Path, tmp_path: Path) -> None:
    hostile = _hostile_run(run, tmp_path / "hostile")
    reports = tmp_path / "reports"
    done = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "report",
                           str(hostile / "results.json"), "--out", str(reports)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    assert_inert(render((reports / "summary.md").read_text()))
    page = (reports / "index.html").read_text()
    assert "<script>alert(1)" not in page and "<img src=x" not in page  # autoescaped
    findings = tmp_path / "findings"
    done = subprocess.run([sys.executable, "-m", "fixturegen", "harness", "findings",
                           str(hostile / "results.json"), "--impl", "lenient", "--out",
                           str(findings)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    texts = [p.read_text() for p in sorted(findings.glob("*.md"))]
    assert len(texts) >= 2  # the index and one class (every rule is the same text)
    for text in texts:
        # One heading per report (its title) and its fixed sections; none from the input.
        assert_inert(render(text.split("<details>")[0]),
                     headings=None if text.startswith("# Findings") else 4)
