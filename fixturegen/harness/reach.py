"""Reachability: whether a run tested each generated fault at all, per implementation entry.

A fault case tests a fault only where the implementation would otherwise accept the
certificate: js-libp2p reads only the first extension, so a fault whose libp2p extension comes
second stops at "no libp2p extension" and never reaches the code that handles the fault. The
corpus holds a *valid twin* of every context the fault cases use (``fault-twin.{host}.{scheme}.
{placement}``: the same host key type, certificate scheme and extension placement, with the
valid extension; ``fixturegen/cases/faults.py``). For one entry of a run, a fault case is
*reached* when the entry answered it and accepted its twin.

Each fault (a family of the fault model) is then, for that entry:

- ``reached``: some case of it was reached;
- ``masked``: none was, though the entry accepts the twin of some context under one of the
  fault's host key types: a context the catalogue lacks (a gap to fill);
- ``unreachable``: none was, and the entry accepts no twin with any of the fault's host key
  types: no context can reach it there (it cannot verify that key type at all).

``unverified`` names the host key types the entry accepts no twin with at all, and what it
said on those twins: no fault under them is tested there. ``masked_hosts`` names, for any
status, the host key types the entry verifies (it accepts a twin with that host key) under
which no case of the fault was reached. ``reason`` says, for a
fault not reached (or masked under some host key types), what the entry said on the twins of
the cases that were not reached: their verdict and error text, counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from fixturegen.harness.results import (
    CaseResult,
    CatalogueEntry,
    EntryReach,
    FaultReach,
    Implementation,
    ReachStatus,
    ResultsFile,
)
from fixturegen.markdown import code, md

#: The parameters of a twin's family (``cases.faults.TWIN_FAMILY``): a fault family with the
#: same ones has twins.
CONTEXT = ("host", "scheme", "placement")
#: An error text in a reason is cut at this many characters.
SAID_LIMIT = 120


def _context(entry: CatalogueEntry) -> tuple[str, ...] | None:
    family = entry.family
    if family is None or sorted(family.parameters) != sorted(CONTEXT):
        return None
    return tuple(family.parameters[name] for name in CONTEXT)


def _said(results: Iterable[CaseResult | None]) -> str:
    counted: Counter[str] = Counter()
    for result in results:
        if result is None:
            counted["no valid twin in the corpus"] += 1
            continue
        verdict = result.verdict or result.outcome
        text = " ".join((result.error or "no error").split())
        if len(text) > SAID_LIMIT:
            text = text[:SAID_LIMIT] + "…"
        counted[f"{verdict}: {text}"] += 1
    return "; ".join(f"{what} (x{n})" if n > 1 else what for what, n in counted.most_common())


def entry_reach(catalogue: Sequence[CatalogueEntry], impl: Implementation) -> EntryReach:
    """The reachability of every fault of ``catalogue`` that ``impl`` answered cases of."""
    from fixturegen.cases.faults import TWIN_FAMILY  # the catalogue, only when it is needed

    twins: dict[tuple[str, ...], str] = {}
    faults: dict[str, list[tuple[CatalogueEntry, tuple[str, ...]]]] = {}
    for entry in catalogue:
        context = _context(entry)
        if context is None or entry.family is None:
            continue
        if entry.family.id == TWIN_FAMILY and entry.expected != "invalid":
            twins[context] = entry.id
        elif entry.expected == "invalid":
            faults.setdefault(entry.family.id, []).append((entry, context))
    got = {c.id: c for c in impl.cases}

    def accepted(context: tuple[str, ...]) -> bool:
        twin = got.get(twins.get(context, ""))
        return twin is not None and twin.verdict == "accept"

    verified = {context[0] for context in twins if accepted(context)}
    out: list[FaultReach] = []
    for family, members in faults.items():
        ran = [(e, ctx) for e, ctx in members
               if e.id in got and got[e.id].verdict in ("accept", "reject")]
        if not ran:
            continue
        reached = [e.id for e, ctx in ran if accepted(ctx)]
        hosts = list(dict.fromkeys(ctx[0] for _, ctx in ran))
        hit = {ctx[0] for e, ctx in ran if e.id in reached}
        masked_hosts = [h for h in hosts if h in verified and h not in hit]
        status: ReachStatus = ("reached" if reached else
                               "masked" if any(h in verified for h in hosts) else "unreachable")
        reason = None
        if status == "unreachable":
            reason = (f"accepts no valid twin with a {' or '.join(hosts)} host key (it cannot "
                      "verify that key type in any context): "
                      + _said(got.get(twins.get(ctx, "")) for _, ctx in ran))
        elif masked_hosts:
            missed = [ctx for _, ctx in ran if ctx[0] in masked_hosts]
            reason = (f"rejects the valid twins of its {len(missed)} context(s) under "
                      f"{', '.join(masked_hosts)}: "
                      + _said(got.get(twins.get(ctx, "")) for ctx in missed))
        out.append(FaultReach(fault=family, status=status, cases=len(ran), reached=reached,
                              hosts=hosts, masked_hosts=masked_hosts, reason=reason))
    # The host key types of the twins this entry answered but accepted none of.
    answered = list(dict.fromkeys(context[0] for context, twin in twins.items() if twin in got))
    unverified = {host: _said(got[twin] for context, twin in twins.items()
                              if context[0] == host and twin in got)
                  for host in answered if host not in verified}
    return EntryReach(label=impl.label, faults=out, unverified=unverified)


def reachability(catalogue: Sequence[CatalogueEntry], implementations: Iterable[Implementation]
                 ) -> list[EntryReach]:
    """Every entry's reachability (an entry that answered no fault case has none)."""
    reach = [entry_reach(catalogue, impl) for impl in implementations]
    return [r for r in reach if r.faults]


def not_reached(reach: EntryReach) -> list[FaultReach]:
    """The faults of an entry not reached, or masked under some host key type: masked first,
    then partly masked, then unreachable."""
    order = {"masked": 0, "reached": 1, "unreachable": 2}
    return sorted((f for f in reach.faults if f.status != "reached" or f.masked_hosts),
                  key=lambda f: (order[f.status], f.fault))


def reach_of(results: ResultsFile) -> list[EntryReach]:
    """The run's reachability: as written, or computed from its catalogue (a file written
    before the field; without the catalogue's families, nothing)."""
    if results.reachability is not None:
        return list(results.reachability)
    return reachability(results.catalogue, results.implementations)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NotReached(_Model):
    """One fault an entry did not reach everywhere, as the HTML page shows it."""

    status: ReachStatus
    fault: str
    masked_hosts: list[str]
    reason: str | None


class ReachRow(_Model):
    """One entry's line of the page's reachability table, and its faults not reached."""

    label: str
    faults: int
    reached: int
    masked: int
    partly: int
    unreachable: int
    not_reached: list[NotReached]
    #: Host key type -> what the entry said on its twins, for each it accepts no twin with.
    unverified: dict[str, str] = {}


def reach_rows(results: ResultsFile) -> list[ReachRow]:
    return [ReachRow(label=r.label, faults=len(r.faults), reached=r.count("reached"),
                     masked=r.count("masked"), partly=r.partly,
                     unreachable=r.count("unreachable"),
                     not_reached=[NotReached(status=f.status, fault=f.fault,
                                             masked_hosts=f.masked_hosts, reason=f.reason)
                                  for f in not_reached(r)],
                     unverified=dict(r.unverified))
            for r in reach_of(results)]


#: What the reports say the reachability is (the summary, the page, the findings index).
EXPLANATION = (
    "A generated fault is tested only where the entry accepts the same context without it: "
    "its valid twin (fault-twin.HOST.SCHEME.PLACEMENT). Reached: some case of the fault ran "
    "in a context the entry accepts. Masked: none did, though the entry accepts some context "
    "under the fault's host key types (a context the catalogue lacks). Partly masked: "
    "reached, but not under every host key type the entry verifies. Unreachable: the entry "
    "accepts no context with the fault's host key types at all.")


def _item(f: FaultReach | NotReached) -> str:
    status = "partly masked" if f.status == "reached" else f.status
    hosts = f" under {md(', '.join(f.masked_hosts))}" if f.status != "unreachable" else ""
    return f"- **{md(status)}**{hosts} {code(f.fault)}: {md(f.reason or '-')}"


def reach_markdown(results: ResultsFile) -> list[str]:
    """The summary's section (none when the run answered no generated fault)."""
    rows = reach_rows(results)
    if not rows:
        return []
    lines = ["", "## Reachability of the generated faults", "", EXPLANATION, "",
             "| entry | faults | reached | masked | partly masked | unreachable |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {md(r.label)} | {r.faults} | {r.reached} | {r.masked} | {r.partly} "
              f"| {r.unreachable} |" for r in rows]
    for r in rows:
        if r.not_reached or r.unverified:
            lines += ["", f"### {md(r.label)}: faults not reached everywhere", ""]
            lines += _unverified(r)
            lines += [_item(f) for f in r.not_reached]
    return lines


def _unverified(r: ReachRow) -> list[str]:
    return [f"- **cannot verify** {md(host)} host keys (no fault is tested under them): "
            f"{md(said)}" for host, said in r.unverified.items()]


def reach_findings(results: ResultsFile, name: str) -> list[str]:
    """The findings index's section for implementation ``name``: its entries' faults not
    reached everywhere (what its divergence classes cannot show)."""
    rows = [r for r in reach_rows(results)
            if r.label == name or r.label.startswith(f"{name}@")]
    if not rows:
        return []
    lines = ["", "## Faults this run could not test", "", EXPLANATION, ""]
    for r in rows:
        lines.append(f"- {code(r.label)}: {r.faults} faults, {r.reached} reached, {r.masked} "
                     f"masked, {r.partly} partly masked, {r.unreachable} unreachable")
    for r in rows:
        if r.not_reached or r.unverified:
            lines += ["", f"### {md(r.label)}", ""]
            lines += _unverified(r)
            lines += [_item(f) for f in r.not_reached]
    return lines
