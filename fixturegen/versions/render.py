"""The version matrix as Markdown (``matrix.md``) and as a page (``index.html``): versions
across, divergence classes down, a coloured cell where a version shows a class."""

from __future__ import annotations

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from fixturegen.harness.matrix import MatrixFile, VersionedClass
from fixturegen.markdown import code, md
from fixturegen.output.render import TEMPLATES

OUTCOME_WORDS = {"false_accept": "accepts", "false_reject": "rejects",
                 "wrong_reason": "rejects for another reason", "hang": "hangs on",
                 "crash": "crashes on", "error": "answers garbage for"}


def describe(cls: VersionedClass) -> str:
    kind = {"false_accept": "invalid case(s) accepted", "false_reject": "valid case(s) rejected",
            "wrong_reason": "invalid case(s) rejected for another reason"
            }.get(cls.outcome, cls.outcome)
    return f"{len(cls.cases)} {kind}: {cls.rule}"


def matrix_markdown(m: MatrixFile) -> str:
    built = m.built()
    lines = [f"# {md(m.implementation)}: divergence classes across versions", "",
             f"{md(m.package)}; versions {code(m.spec)} ({len(m.versions)} tried, {len(built)} "
             f"built and run); mode `{m.mode}`; corpus {code(m.corpus)} (seed "
             f"{code(m.seed) if m.seed is not None else 'none'}, catalogue "
             f"{code(m.catalogue_version)}); {md(m.generator)}.", "",
             "## Classes", ""]
    if m.classes:
        lines += ["| class | outcome | importance | affected versions | first seen | fixed in |",
                  "|---|---|---|---|---|---|"]
        for cls in m.classes:
            spans = ", ".join(a if a == b else f"{a} to {b}" for a, b in cls.ranges)
            lines.append(f"| {md(describe(cls))} | {cls.outcome} | {cls.importance or '-'} | "
                         f"{md(spans)} ({len(cls.affected)}) | {md(cls.introduced or '-')} | "
                         f"{md(cls.fixed_in or 'not fixed')} |")
    else:
        lines.append("No divergence in any version built.")
    lines += ["", "## The certificates it made", ""]
    interop = [v for v in built if v.checkers]
    if not interop:
        lines.append("No version ran the interop stage (`--no-interop`).")
    elif m.made:
        lines += [f"Each version's certificates ({len(interop)} versions), checked by it, "
                  f"{md(', '.join(interop[-1].checkers[1:]) or 'no other implementation')} "
                  "and the reference verifier.", "",
                  "| what | affected versions | first seen | fixed in |", "|---|---|---|---|"]
        for item in m.made:
            spans = ", ".join(a if a == b else f"{a} to {b}" for a, b in item.ranges)
            lines.append(f"| {md(item.what)} | {md(spans)} ({len(item.affected)}) | "
                         f"{md(item.introduced or '-')} | {md(item.fixed_in or 'not fixed')} |")
    else:
        lines.append(f"Nothing to report in the certificates of the {len(interop)} versions "
                     "that ran the interop stage: every one made, no sender flag, refused by "
                     "no checker.")
    lines += ["", "## Versions", "", "| version | released | built | entries | false accept | "
              "false reject | hang/crash/error | seconds (build / run) | notes |",
              "|---|---|---|---|---|---|---|---|---|"]
    for v in m.versions:
        c = v.counts
        if v.built:
            bad = c.get("hang", 0) + c.get("crash", 0) + c.get("error", 0)
            lines.append(f"| {md(v.version)} | {md((v.released or '-')[:10])} | yes | "
                         f"{len(v.entries)} | "
                         f"{c.get('false_accept', 0)} | {c.get('false_reject', 0)} | {bad} | "
                         f"{v.build_seconds or 0:.0f} / {v.run_seconds or 0:.0f} | "
                         f"{md('; '.join(v.notes + ([v.reason] if v.reason else [])))} |")
        else:
            lines.append(f"| {md(v.version)} | {md((v.released or '-')[:10])} | no | - | - | - | "
                         f"- | - | {md(v.reason or '')} |")
    return "\n".join(lines) + "\n"


def matrix_html(m: MatrixFile) -> str:
    env = Environment(loader=FileSystemLoader(TEMPLATES), undefined=StrictUndefined,
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True,
                      lstrip_blocks=True)
    return env.get_template("matrix.html.j2").render(m=m, describe=describe)
