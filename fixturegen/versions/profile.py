"""``fixturegen harness profile``: the handshake cost of two builds of one implementation, side
by side, for the performance pull requests of this field (a change that saves one signature
check per handshake must show as a ratio whose interval excludes 1, or be called noise).

For each transport, direction and certificate scheme (one valid certificate per scheme the
fixture peer can present), the two builds run in alternating batches (A B, then B A, ...), each
batch a fresh adapter process whose first handshake (warm-up) is left out; so drift of the
machine hits both. Per build: the median wall time (request to the implementation's answer)
and the median CPU time the adapter's own process spent (measured by the adapter around the
handshake). The ratio B/A of the medians comes with a 95% bootstrap interval (2,000 resamples,
a fixed seed: the same samples give the same interval).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from statistics import median

from fixturegen.harness.handshake import DIRECTIONS, PROFILE_CASES
from fixturegen.harness.rules import Direction, Transport
from fixturegen.harness.session import Corpus, Target, run_handshake

RESAMPLES = 2000


@dataclass(frozen=True)
class Samples:
    wall: list[float]
    cpu: list[float]
    refused: str | None = None  # the build did not accept the valid handshake: why


@dataclass(frozen=True)
class Row:
    entry: str  # TRANSPORT-DIRECTION
    scheme: str
    a: Samples
    b: Samples


def ratio_interval(a: Sequence[float], b: Sequence[float], seed: int = 1
                   ) -> tuple[float, float, float]:
    """median(b) / median(a) and its 95% bootstrap interval."""
    rng = random.Random(seed)
    ratios = []
    for _ in range(RESAMPLES):
        ma = median(rng.choices(a, k=len(a)))
        mb = median(rng.choices(b, k=len(b)))
        ratios.append(mb / ma if ma > 0 else float("inf"))
    ratios.sort()
    low, high = ratios[int(0.025 * RESAMPLES)], ratios[int(0.975 * RESAMPLES) - 1]
    middle = median(a)
    return (median(b) / middle if middle > 0 else float("inf")), low, high


def verdict(low: float, high: float) -> str:
    if high < 1.0:
        return "B faster"
    if low > 1.0:
        return "B slower"
    return "no difference (the interval holds 1)"


def run_id(fixture: str, number: int) -> str:
    """The id of a profile's ``number``-th handshake of ``fixture`` (a case id's characters
    only: letters, digits, '.', '_' and '-')."""
    return f"{fixture}.run-{number}"


def profile(a: Target, b: Target, corpus: Corpus, peer_argv: Sequence[str], *,
            rounds: int, batch: int, transports: Sequence[Transport],
            directions: Sequence[Direction] = DIRECTIONS, timeout: float = 20.0,
            startup: float = 60.0, say: Callable[[str], None] | None = None) -> list[Row]:
    rows: list[Row] = []
    for transport in transports:
        for direction in directions:
            plan = {hc.id: hc for hc in corpus.plans.get((transport, direction), [])}
            for fixture in PROFILE_CASES:
                if fixture not in plan:
                    continue
                case = plan[fixture]
                runs = [replace(case, case=replace(case.case, request=case.case.request
                                                   .model_copy(update={"id": run_id(fixture, i)})))
                        for i in range(batch + 1)]
                got: dict[str, Samples] = {"a": Samples([], []), "b": Samples([], [])}
                for r in range(rounds):
                    for which in ("ab" if r % 2 == 0 else "ba"):
                        target = a if which == "a" else b
                        entry = run_handshake(target, peer_argv, runs, transport, direction,
                                              timeout=timeout, startup=startup,
                                              stderr_path=None)
                        done = [c for c in entry.cases[1:] if c.verdict == "accept"]
                        have = got[which]
                        refused = have.refused
                        if not done and refused is None:
                            first = entry.cases[-1]
                            refused = f"{first.outcome}: {first.error or 'no error'}"
                        got[which] = Samples(
                            have.wall + [c.seconds for c in done],
                            have.cpu + [c.cpu_seconds for c in done if c.cpu_seconds is not None],
                            refused)
                scheme = fixture.split(".")[1]
                rows.append(Row(f"{transport}-{direction}", scheme, got["a"], got["b"]))
                if say is not None:
                    say(f"profile: {transport}-{direction} {scheme}: {len(got['a'].wall)} / "
                        f"{len(got['b'].wall)} handshakes")
    return rows


def table(a: Target, b: Target, rows: Sequence[Row]) -> str:
    """The comparison as Markdown: medians in ms, the ratio B/A and its interval."""
    lines = [f"A = {a.name} {a.version}; B = {b.name} {b.version}. Medians in ms over the "
             "accepted handshakes (n per build); ratio B/A with its 95% bootstrap interval.", "",
             "| entry | scheme | n (A/B) | wall A | wall B | wall B/A [95%] | CPU A | CPU B | "
             "CPU B/A [95%] | CPU verdict |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if not row.a.wall or not row.b.wall:
            why = row.a.refused if not row.a.wall else row.b.refused
            lines.append(f"| {row.entry} | {row.scheme} | {len(row.a.wall)}/{len(row.b.wall)} "
                         f"| | | | | | | refused: {' '.join(str(why).split())[:120]} |")
            continue
        w, wl, wh = ratio_interval(row.a.wall, row.b.wall)
        cells = [f"| {row.entry} | {row.scheme} | {len(row.a.wall)}/{len(row.b.wall)} | "
                 f"{1000 * median(row.a.wall):.2f} | {1000 * median(row.b.wall):.2f} | "
                 f"{w:.3f} [{wl:.3f}, {wh:.3f}] |"]
        if row.a.cpu and row.b.cpu:
            c, cl, ch = ratio_interval(row.a.cpu, row.b.cpu)
            cells.append(f" {1000 * median(row.a.cpu):.3f} | {1000 * median(row.b.cpu):.3f} | "
                         f"{c:.3f} [{cl:.3f}, {ch:.3f}] | {verdict(cl, ch)} |")
        else:
            cells.append(" - | - | - | the adapter reports no CPU time |")
        lines.append("".join(cells))
    return "\n".join(lines) + "\n"
