"""A verdict against the manifest: the outcome of one case for one implementation.

- ``agree``: the verdict the manifest requires (and, on accept, the expected PeerId);
- ``false_accept``: accepted an invalid case, or accepted with another PeerId than the one
  expected (a security finding);
- ``false_reject``: rejected a valid case (an interoperability finding);
- ``wrong_reason``: rejected an invalid case, as required, but for another reason: its error
  text maps, through the adapter's reason table (:mod:`fixturegen.harness.reasons`), to
  reference error codes none of which is the one the manifest expects, nor one of the case's
  other right reasons (``expected.also``) (the check that should refuse the case may be
  missing, hidden behind the one that did);
- ``acceptable``: either verdict is allowed, and it was given with the right PeerId (a
  rejection of an acceptable case is never ``wrong_reason``: no reason is prescribed);
- ``skip``: the implementation said it does not handle this kind of case;
- ``hang`` / ``crash`` / ``error``: the adapter timed out, died, or answered garbage.

A rejection whose text no row of the table matches (or whose adapter has no table) has no
mapped reason and stays ``agree``: an unknown reason is not a wrong one.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from fixturegen.harness.requests import Expectation

Outcome = Literal["agree", "false_accept", "false_reject", "wrong_reason", "acceptable", "skip",
                  "hang", "crash", "error"]
OUTCOMES: tuple[Outcome, ...] = ("agree", "acceptable", "false_accept", "false_reject",
                                 "wrong_reason", "skip", "hang", "crash", "error")
DIVERGENCES = frozenset({"false_accept", "false_reject", "wrong_reason", "hang", "crash",
                         "error"})


def is_wrong_reason(expected_error: str | None, reason: Collection[str] | None,
                    also: Collection[str] = ()) -> bool:
    """The mapped ``reason`` (reference error codes) is known and excludes the expected code
    and every code ``also`` names (the case's other right reasons)."""
    if not reason or expected_error is None:
        return False
    return not ({expected_error, *also} & set(reason))


def outcome(expected: Expectation, verdict: str | None, peer_id: str | None,
            failure: str | None, reason: Collection[str] | None = None) -> Outcome:
    """The outcome of one answer; ``reason`` is the mapped reason of a rejection (None: no row
    of the table matched, or no table)."""
    if failure == "hang":
        return "hang"
    if failure == "crash":
        return "crash"
    if failure is not None or verdict is None:
        return "error"
    if verdict == "skip":
        return "skip"
    if verdict == "accept":
        if expected.result == "invalid":
            return "false_accept"
        if expected.peer_id is not None and peer_id != expected.peer_id:
            return "false_accept"
        return "agree" if expected.result == "valid" else "acceptable"
    if verdict == "reject":
        if expected.result == "valid":
            return "false_reject"
        if expected.result == "acceptable":
            return "acceptable"
        return ("wrong_reason" if is_wrong_reason(expected.error, reason, expected.also)
                else "agree")
    return "error"
