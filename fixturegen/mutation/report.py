"""A campaign's summary (``mutation.md``, ``mutation.html``) and the join of shard outputs
(``fixturegen mutate merge``). Either kind of campaign (the tool's mutants, the bug models) gets
the same counts, plus its single-case kills (mutants only one corpus case kills); a bug-model
campaign also gets a table of every bug with its description and its killing cases."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from statistics import median

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from pydantic import ValidationError

from fixturegen.markdown import code, md
from fixturegen.mutation.model import MutantResult, MutationFile, count, single, with_cases
from fixturegen.output.render import TEMPLATES
from fixturegen.verify.inputs import InputError, printable, shown
from fixturegen.verify.jsonfile import load_json

#: At most this many killing cases of one bug are named in the bug table (the rest counted).
SHOWN_CASES = 5


class MergeError(Exception):
    """Shard outputs that cannot be joined (one line)."""


def change(r: MutantResult) -> str:
    """The mutant as one short line: what the span held, and what it holds now."""
    before = " ".join(r.mutant.original.split())[:80] or "(nothing)"
    after = " ".join(r.mutant.replacement.split())[:80] or "(nothing)"
    return f"{before} → {after}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def cases_text(r: MutantResult, most: int = SHOWN_CASES) -> str:
    """The cases that kill ``r`` (at most ``most`` named, the rest counted)."""
    cases = r.corpus.cases if r.corpus is not None else []
    named = ", ".join(code(case) for case in cases[:most])
    more = f" and {len(cases) - most} more" if len(cases) > most else ""
    stopped = " (run stopped at a hang)" if r.corpus is not None and r.corpus.stopped else ""
    return (named + more + stopped) or "-"


def markdown(f: MutationFile) -> str:
    c = f.counts
    live = c.generated - c.unviable - c.equivalent
    bugs = f.kind == "bugs"
    title = "Bug models" if bugs else "Mutation adequacy"
    lines = [f"# {title}: {md(f.implementation)} {md(f.version)}", "",
             f"{md(f.tool)}; scope: {', '.join(code(s) for s in f.scope)}; corpus "
             f"{code(f.corpus)} (seed {code(f.seed)}, catalogue {code(f.catalogue_version)}); "
             f"mode {code(f.mode)}"
             + (f"; shard {md(f.shard)}" if f.shard else "") + f"; {md(f.generator)}.", "",
             f"Upstream tests: {md(f.upstream)}.", "",
             f"| {'bugs' if bugs else 'mutants'} | unviable | equivalent | scored | "
             "killed by the corpus | "
             "(verdict / reason only) | killed by upstream tests | both | corpus only | "
             "upstream only | survived both |",
             "|---|---|---|---|---|---|---|---|---|---|---|",
             f"| {c.generated} | {c.unviable} | {c.equivalent} | {live} | {c.killed_by_corpus} "
             f"({percent(c.corpus_score)}) | {c.killed_by_verdict} / {c.killed_by_reason_only} | "
             f"{c.killed_by_upstream} ({percent(c.upstream_score)}) | {c.both} | "
             f"{c.corpus_only} | {c.upstream_only} | {c.survived} |", "",
             f"Survivors of the corpus reviewed: {c.gap} gap, {c.unkillable} unkillable. Over "
             f"the mutants a certificate can kill (scored minus unkillable: "
             f"{live - c.unkillable}), the corpus killed {percent(c.corpus_score_killable)}.",
             ""]
    if f.seconds_per_mutant:
        lines += ["Median seconds per mutant: " + ", ".join(
            f"{md(k)} {v:.1f}" for k, v in f.seconds_per_mutant.items()) + ".", ""]
    if bugs:
        lines += bug_table(f)
    lines += single_kills(f)
    survivors = [r for r in f.mutants if r.status == "survived" or (
        r.status == "killed" and r.category == "upstream_only")]
    lines += ["## Survivors of the corpus", "",
              "Each one a bug the corpus would miss: `gap` (a missing case; the note says what "
              "input would kill it), `unkillable` (no certificate can), `unreviewed`; "
              "upstream: whether the implementation's own tests caught it.", ""]
    if survivors:
        lines += ["| mutant | function | change | upstream | verdict | note |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {code(r.mutant.id)} | {md(r.mutant.function or '-')} | {md(change(r))} | "
                  f"{md(r.upstream)} | {md(r.survivor or '-')} | {md(r.note)} |" for r in survivors]
    else:
        lines.append("None.")
    equivalent = [r for r in f.mutants if r.status == "equivalent"]
    if equivalent:
        lines += ["", "## Equivalent (cannot change behaviour; reviewed)", "",
                  "| mutant | change | why |", "|---|---|---|"]
        lines += [f"| {code(r.mutant.id)} | {md(change(r))} | {md(r.note)} |"
                  for r in equivalent]
    unviable = [r for r in f.mutants if r.status == "unviable"]
    if unviable:
        lines += ["", f"## Unviable ({len(unviable)}: the mutant does not build)", ""]
        lines += [f"- {code(r.mutant.id)}: {md(r.note)}" for r in unviable[:50]]
    return "\n".join(lines) + "\n"


def single_kills(f: MutationFile) -> list[str]:
    """The section on robust kills: how many cases kill each killed mutant, and the mutants
    one case alone kills (what deleting that case would cost)."""
    c = f.counts
    ones = [r for r in f.mutants if r.status == "killed" and single(r)]
    stopped = sum(1 for r in f.mutants if r.corpus is not None and r.corpus.stopped)
    lines = ["## Kills that rest on one case", "",
             f"Of the {c.killed_by_corpus} killed by the corpus, {c.killed_by_one_case} are "
             f"killed by exactly one case and {c.killed_by_several_cases} by two or more"
             + (f" ({stopped} runs stopped at a hang, their cases a lower bound)"
                if stopped else "") + ". Deleting the case below would let its mutant live.",
             ""]
    if ones:
        lines += ["| mutant | the one case | by |", "|---|---|---|"]
        lines += [f"| {code(r.mutant.id)} | {cases_text(r)} | "
                  f"{'verdict' if r.corpus is not None and r.corpus.verdict else 'reason'} |"
                  for r in ones]
    else:
        lines.append("None.")
    return [*lines, ""]


def bug_table(f: MutationFile) -> list[str]:
    """Every bug model: what it is, what became of it, which cases kill it."""
    lines = ["## Every bug model", "",
             "| bug | description | kind | status | upstream | killing cases | cases |",
             "|---|---|---|---|---|---|---|"]
    for r in f.mutants:
        status = r.category if r.status == "killed" else r.status
        lines.append(f"| {code(r.mutant.id)} | {md(r.mutant.description or '-')} | "
                     f"{md(r.mutant.operator)} | {md(status)} | {md(r.upstream)} | "
                     f"{r.killing_cases} | {cases_text(r)} |")
    return [*lines, ""]


def html(f: MutationFile) -> str:
    env = Environment(loader=FileSystemLoader(TEMPLATES), undefined=StrictUndefined,
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True,
                      lstrip_blocks=True, finalize=shown)
    return env.get_template("mutation.html.j2").render(f=f, change=change, percent=percent)


def load(path: Path) -> MutationFile:
    try:
        return MutationFile.model_validate(load_json(path, "mutation", "mutation report"))
    except InputError as exc:
        raise MergeError(str(exc)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise MergeError(printable(f"{path} is not a mutation report: {where}: {first['msg']}")
                         ) from None


#: The most shards a campaign is split into (a report's ``shard`` is untrusted input).
MAX_SHARDS = 999_999
_SHARD = re.compile(r"([0-9]{1,6})/([0-9]{1,6})")


def parse_shard(text: str) -> tuple[int, int] | None:
    """``K/N`` as (K, N) when 0 <= K < N <= :data:`MAX_SHARDS`, else None (the one check of
    ``--shard`` and of a report's ``shard``)."""
    found = _SHARD.fullmatch(text)
    if found is None:
        return None
    k, n = int(found[1]), int(found[2])
    return (k, n) if 0 <= k < n <= MAX_SHARDS else None


def merge(parts: list[MutationFile]) -> MutationFile:
    """One report from the shard reports of one campaign: same implementation, version, tool,
    corpus, seed, mode and generator, every shard once (``K/N``, one N), no mutant in two
    reports. Anything else is a MergeError (one line)."""
    if not parts:
        raise MergeError("nothing to merge")
    first = parts[0]
    for other in parts[1:]:
        for field in ("implementation", "kind", "version", "tool", "corpus", "seed",
                      "catalogue_version", "mode", "generator"):
            if getattr(other, field) != getattr(first, field):
                raise MergeError(printable(
                    f"the shards differ in {field}: {getattr(first, field)!r} and "
                    f"{getattr(other, field)!r}: they are not shards of one campaign"))
    shards: list[tuple[int, int]] = []
    for part in parts:
        if part.shard is None:
            if len(parts) > 1:
                raise MergeError("a whole campaign (no shard) cannot be merged with others")
            continue
        parsed = parse_shard(part.shard)
        if parsed is None:
            raise MergeError(printable(f"shard {part.shard[:40]!r} is not K/N with 0 <= K < N "
                                       f"<= {MAX_SHARDS}"))
        shards.append(parsed)
    counts_of = {n for _, n in shards}
    if len(counts_of) > 1:
        split = sorted(f"{k}/{n}" for k, n in shards)
        raise MergeError(f"the shards split the campaign differently: {split[:6]!r}")
    if counts_of:
        (total,) = counts_of
        have = [k for k, _ in shards]
        twice = sorted({k for k in have if have.count(k) > 1})
        if twice:
            raise MergeError(f"shard {twice[0]}/{total} is given twice")
        if len(have) < total:  # the first missing one is among the first len(have) + 1
            missing = min(set(range(len(have) + 1)) - set(have))
            raise MergeError(f"shard {missing}/{total} is missing ({total - len(have)} of "
                             f"{total} missing): merge every shard of the campaign")
    owner: dict[str, int] = {}
    for index, part in enumerate(parts):
        for r in part.mutants:
            if owner.setdefault(r.mutant.id, index) != index:
                raise MergeError(printable(
                    f"mutant {r.mutant.id[:120]!r} is in two shards "
                    f"({parts[owner[r.mutant.id]].shard} and {part.shard}): not one "
                    "campaign's shards"))
    results: dict[str, MutantResult] = {}
    for part in parts:
        for r in part.mutants:
            results[r.mutant.id] = with_cases(r)
    merged = sorted(results.values(), key=lambda r: r.mutant.id)
    upstream_ran = any(not p.upstream.startswith("not run") for p in parts)
    seconds: dict[str, float] = {}  # the median of the shards' medians
    for k in sorted({k for p in parts for k in p.seconds_per_mutant}):
        seconds[k] = round(median(p.seconds_per_mutant[k] for p in parts
                                  if k in p.seconds_per_mutant), 2)
    return first.model_copy(update={"shard": None, "mutants": merged,
                                    "counts": count(merged, upstream_ran),
                                    "seconds_per_mutant": seconds,
                                    "scope": sorted({s for p in parts for s in p.scope})})


def review(f: MutationFile, survivors: Mapping[str, tuple[str, str]]) -> MutationFile:
    """The report with the reviewed verdicts (the adapter's ``NAME.survivors.tsv``) applied to
    its finished mutants, the counts made again: a survivor of the corpus gets its verdict and
    note, and one reviewed ``equivalent`` that nothing killed leaves the scores. A mutant the
    corpus killed keeps its result whatever the file says."""
    out: list[MutantResult] = []
    for r in map(with_cases, f.mutants):
        reviewed = survivors.get(r.mutant.id)
        killed = r.corpus is not None and bool(r.corpus.verdict or r.corpus.reason)
        if reviewed is None or killed or r.status in ("unviable", "equivalent"):
            out.append(r)
        elif reviewed[0] == "equivalent" and r.status == "survived":
            out.append(r.model_copy(update={"status": "equivalent", "category": "equivalent",
                                            "note": reviewed[1], "survivor": "equivalent"}))
        else:
            out.append(r.model_copy(update={"survivor": reviewed[0], "note": reviewed[1]}))
    upstream_ran = not f.upstream.startswith("not run")
    return f.model_copy(update={"mutants": out, "counts": count(out, upstream_ran)})


def dumps(f: MutationFile) -> str:
    return json.dumps(f.model_dump(mode="json"), indent=1) + "\n"
