"""A verdict against the manifest: the outcome of one case for one implementation.

- ``agree``: the verdict the manifest requires (and, on accept, the expected PeerId);
- ``false_accept``: accepted an invalid case, or accepted with another PeerId than the one
  expected (a security finding);
- ``false_reject``: rejected a valid case (an interoperability finding);
- ``acceptable``: either verdict is allowed, and it was given with the right PeerId;
- ``skip``: the implementation said it does not handle this kind of case;
- ``hang`` / ``crash`` / ``error``: the adapter timed out, died, or answered garbage.
"""

from __future__ import annotations

from typing import Literal

from fixturegen.harness.requests import Expectation

Outcome = Literal["agree", "false_accept", "false_reject", "acceptable", "skip", "hang",
                  "crash", "error"]
OUTCOMES: tuple[Outcome, ...] = ("agree", "acceptable", "false_accept", "false_reject", "skip",
                                 "hang", "crash", "error")
DIVERGENCES = frozenset({"false_accept", "false_reject", "hang", "crash", "error"})


def outcome(expected: Expectation, verdict: str | None, peer_id: str | None,
            failure: str | None) -> Outcome:
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
        return "agree" if expected.result == "invalid" else "acceptable"
    return "error"
