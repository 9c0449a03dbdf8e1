"""``fixturegen harness check``: whether one case still diverges in one build, as an exit status
``git bisect run`` understands.

0: the build gives the case the outcome the manifest expects (``agree`` or ``acceptable``);
1: it diverges (a false accept or reject, a wrong reason, a hang, a crash, an answer that is
not one);
125: this build cannot say: it cannot be built, or it does not take the case (``skip``), which
``git bisect`` reads as "skip this commit". ``--good diverges`` swaps 0 and 1, for finding the
commit that fixed a divergence (``git bisect start --term-old=broken --term-new=fixed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from fixturegen.harness.compare import DIVERGENCES
from fixturegen.harness.handshake import DIRECTIONS
from fixturegen.harness.results import CaseResult
from fixturegen.harness.rules import Direction, Transport
from fixturegen.harness.session import Corpus, Target, run_handshake, run_target

EXIT_EXPECTED, EXIT_DIVERGES, EXIT_CANNOT_TELL = 0, 1, 125
ENTRIES = ("api", *(f"{t}-{d}" for t in ("tcp", "quic") for d in DIRECTIONS))
Good = Literal["expected", "diverges"]


class CheckError(Exception):
    """The case or the entry cannot be run (a usage error)."""


@dataclass(frozen=True)
class Checked:
    label: str
    result: CaseResult

    @property
    def diverges(self) -> bool:
        return self.result.outcome in DIVERGENCES

    def status(self, good: Good) -> int:
        if self.result.outcome == "skip":
            return EXIT_CANNOT_TELL
        bad = self.diverges if good == "expected" else not self.diverges
        return EXIT_DIVERGES if bad else EXIT_EXPECTED

    def line(self, version: str) -> str:
        r = self.result
        said = (f"accepted (PeerId {r.peer_id})" if r.verdict == "accept" else r.error or
                "no error text")
        said = " ".join(said.split())
        said = said if len(said) <= 200 else said[:197] + "..."
        word = "diverges" if self.diverges else "as expected"
        return f"{self.label} {version}: {r.id}: {r.outcome} ({word}): {said}"


def check(target: Target, corpus: Corpus, case_id: str, entry: str, *,
          peer_argv: Sequence[str], timeout: float, startup: float) -> Checked:
    """Run case ``case_id`` through one entry of ``target``; raises CheckError."""
    if entry not in ENTRIES:
        raise CheckError(f"--entry {entry!r}: use one of {', '.join(ENTRIES)}")
    if entry == "api":
        cases = [c for c in corpus.api if c.id == case_id]
        if not cases:
            raise CheckError(_unknown(case_id, [c.id for c in corpus.api], "api"))
        impl = run_target(target, cases, timeout=timeout, startup=startup, stderr_path=None,
                          every=corpus.api)
        return Checked(target.name, impl.cases[0])
    transport_text, direction_text = entry.split("-")
    transport: Transport = "tcp" if transport_text == "tcp" else "quic"
    direction: Direction = "dial" if direction_text == "dial" else "listen"
    if transport not in target.transports:
        raise CheckError(f"{target.name} {target.version} has no {transport} handshake mode"
                         + (f" ({'; '.join(target.notes)})" if target.notes else ""))
    plan = corpus.plans.get((transport, direction), [])
    chosen = [hc for hc in plan if hc.id == case_id]
    if not chosen:
        raise CheckError(_unknown(case_id, [hc.id for hc in plan], entry))
    impl = run_handshake(target, peer_argv, chosen, transport, direction, timeout=timeout,
                         startup=startup, stderr_path=None, every=plan)
    return Checked(impl.label, impl.cases[0])


def _unknown(case_id: str, known: list[str], entry: str) -> str:
    near = [k for k in known if case_id.split(".")[0] in k][:3]
    hint = f" (e.g. {', '.join(near)})" if near else ""
    return f"no case {case_id!r} in the corpus for the {entry} entry{hint}"
