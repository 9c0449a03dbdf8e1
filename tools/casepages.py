"""The case pages of the documentation site (``results/cases/``), rendered when the site is
built: one page per family of the catalogue (a case declared alone is a family of one), and an
index of them by catalogue section.

Each case on its page shows what x509-limbo's case pages show: its certificate (PEM, and a
decoded view from ``fixturegen.output.asn1text``), built from the catalogue with the seed of the
latest conformance run, the result the catalogue expects, and what every entry of that run
answered (``docs/results/page.json``: the answer, the outcome against the expectation, and what
the implementation said when it refused). The matrix and the findings link each case id here.

The certificates are built, not stored: ``results_stale`` (``tools/docpages.py``) makes the site
build fail unless the run's cases and seed are the catalogue's, so what a page shows is what the
run was sent.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import re
from collections.abc import Sequence

from fixturegen.cases import CATALOGUE, Case, Rendered
from fixturegen.harness.pagedata import LETTERS, OUTCOME_OF, SECTIONS, PageData
from fixturegen.output.asn1text import decoded
from fixturegen.output.writer import render_all

#: Where the pages go, under the site's ``results/``.
FOLDER = "cases"
#: A family's page is left out of the search index: the site search would index every
#: certificate's text (megabytes), and the theme's indexer spends minutes on them. The index
#: page is searched, and each case is one click from the matrix.
NOT_SEARCHED = ["---", "search:", "  exclude: true", "---", ""]
#: What each letter of an entry's verdicts says.
ANSWERS = {"A": "accepted", "R": "rejected", "s": "skipped"}
#: An outcome that is a divergence is shown in bold.
DIVERGING = {"false_accept", "false_reject", "wrong_reason", "hang", "crash", "error"}
assert set(DIVERGING) <= set(LETTERS)


def slug(family: str) -> str:
    """A family's page name: its id template without the parameters (``{host}``)."""
    return re.sub(r"[^a-z0-9.-]+", "-", re.sub(r"\.?\{[^}]*\}", "", family).lower()).strip(
        "-.") or "case"


@functools.cache
def page_names() -> dict[str, str]:
    """Each family of the catalogue -> its page (without ``.md``), unique."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for c in CATALOGUE:
        if c.family in names:
            continue
        base = name = slug(c.family)
        n = 2
        while name in taken:
            name, n = f"{base}-{n}", n + 1
        names[c.family] = name
        taken.add(name)
    return names


def href(case_id: str) -> str | None:
    """A case's place on its page, relative to the Results pages; None for a case the
    catalogue does not declare."""
    family = _families().get(case_id)
    return None if family is None else f"{FOLDER}/{page_names()[family]}.html#{case_id}"


@functools.cache
def _families() -> dict[str, str]:
    return {c.id: c.family for c in CATALOGUE}


@functools.cache
def _built(seed: str) -> dict[str, Rendered]:
    return {r.fixture.id: r for r in render_all(list(CATALOGUE), seed.encode())}


def _pem(der: bytes) -> str:
    body = base64.b64encode(der).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "\n".join(["-----BEGIN CERTIFICATE-----", *lines, "-----END CERTIFICATE-----"])


def _cell(text: str) -> str:
    return html.escape(" ".join(text.split())).replace("|", "&#124;")


def _answers(d: PageData, at: int) -> list[str]:
    rows = ["| entry | answer | outcome | what it said |", "|---|---|---|---|"]
    for e in d.entries:
        letter = e.outcomes[at]
        if letter == "-":
            rows.append(f"| {_cell(e.label)} | not sent | - | |")
            continue
        outcome = OUTCOME_OF[letter]
        verdict = e.verdicts[at] if e.verdicts else "-"
        answer = ANSWERS.get(verdict, "no answer" if outcome in ("hang", "crash") else "-")
        said = d.texts[e.said[at]] if e.said and e.said[at] >= 0 else ""
        shown = outcome.replace("_", " ")
        rows.append(f"| {_cell(e.label)} | {answer} | "
                    f"{f'**{shown}**' if outcome in DIVERGING else shown} | "
                    f"{_cell(said)} |")
    return rows


def _certificates(rendered: Rendered) -> list[str]:
    files = dict(rendered.files)
    chain = rendered.fixture.chain
    out: list[str] = []
    for n, path in enumerate(chain, 1):
        der = files[path]
        which = f" {n} of {len(chain)}" if len(chain) > 1 else ""
        out += [f"<details><summary>Certificate{which}: PEM ({len(der)} bytes of DER)</summary>",
                f"<pre><code>{html.escape(_pem(der))}</code></pre>", "</details>",
                f"<details><summary>Certificate{which}: decoded</summary>",
                f"<pre><code>{html.escape(decoded(der))}</code></pre>", "</details>", ""]
    return out


def _case(c: Case, rendered: Rendered, d: PageData, at: int | None) -> list[str]:
    expected = rendered.fixture.expected
    said = f"**{c.result}**"
    if c.error is not None:
        said += f" (the reference verifier: `{c.error.value}`"
        said += (f"; also a right reason: {', '.join(f'`{a.value}`' for a in c.also)})"
                 if c.also else ")")
    elif expected.peer_id:
        said += f" (PeerId `{expected.peer_id}`)"
    if c.flags:
        said += "; flags: " + ", ".join(f"`{f.value}`" for f in c.flags)
    lines = [f"## `{c.id}` {{ #{c.id} }}", "", _cell(c.description), "",
             f"Expected: {said}. Rule: {_cell(c.rule) or '-'}. "
             f'<a href="../../reference/cases/{c.section}.html#{c.id}">In the catalogue</a>.',
             ""]
    if c.after:
        lines += [f"Checked just after `{c.after}`, by the same verifier process (the "
                  "manifest's `after`: the harness sends that case first).", ""]
    if rendered.fixture.expect_peer_id:
        lines += [f"The verifier is told to expect the PeerId `{rendered.fixture.expect_peer_id}`.",
                  ""]
    lines += (_answers(d, at) if at is not None else ["Not in the latest run."]) + [""]
    return lines + _certificates(rendered)


def _intro(d: PageData) -> str:
    return (f"The certificates are built from the catalogue with the run's seed (`{d.seed}`); "
            f"the answers are the latest conformance run's ({d.produced or 'an unrecorded date'}"
            f", `{d.command or 'a harness run'}`): for each entry, what it answered, the outcome "
            "against the expected result, and what it said when it refused "
            "([what is compared](../../explain/harness.md#what-is-compared)).")


def pages(d: PageData, only: Sequence[str] | None = None) -> dict[str, str]:
    """``cases/NAME.md`` (under ``results/``) -> its text, for every family and the index, or
    for the families ``only`` names (no index)."""
    head = "<!-- Rendered by tools/casepages.py when the site is built. -->\n"
    at = d.case_index()
    names = page_names()
    families: dict[str, list[Case]] = {}
    for c in CATALOGUE:
        families.setdefault(c.family, []).append(c)
    out: dict[str, str] = {}
    if only is not None:
        wanted = [c for f in only for c in families[f]]
        built = {r.fixture.id: r for r in render_all(wanted, (d.seed or "").encode())}
    else:
        built = _built(d.seed or "")
    for family, members in families.items():
        if only is not None and family not in only:
            continue
        lines = [*NOT_SEARCHED[:-2], f"title: {json.dumps(family)}", *NOT_SEARCHED[-2:], head,
                 f"# `{family}`", "", _intro(d), ""]
        if len(members) > 1:
            lines += [f"{len(members)} cases: " + ", ".join(
                f"[`{c.id}`](#{c.id})" for c in members) + ".", ""]
        for c in members:
            lines += _case(c, built[c.id], d, at.get(c.id))
        out[f"{FOLDER}/{names[family]}.md"] = "\n".join(lines)
    if only is None:
        out[f"{FOLDER}/index.md"] = index(head)
    return out


def index(head: str = "") -> str:
    """The index of the case pages: every family, by catalogue section."""
    names = page_names()
    families: dict[str, list[Case]] = {}
    for c in CATALOGUE:
        families.setdefault(c.family, []).append(c)
    lines = [head, "# Case pages", "",
             "One page per family of the catalogue: each case's certificate (PEM and decoded), "
             "its expected result and what every entry of the latest conformance run answered. "
             "The [matrix](../matrix.md) links each case here.", ""]
    by_section: dict[str, list[str]] = {}
    for family, members in families.items():
        by_section.setdefault(members[0].section, []).append(family)
    for section, found in by_section.items():
        lines += [f"## {SECTIONS.get(section, section)}", "",
                  *(f"- [`{f}`]({names[f]}.md) ({_count(families[f])})" for f in found), ""]
    return "\n".join(lines)


def _count(members: Sequence[Case]) -> str:
    return "1 case" if len(members) == 1 else f"{len(members)} cases"
