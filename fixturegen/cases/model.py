"""The catalogue's value types: a :class:`Case` (what to build and what a verifier must say)
and a :class:`Built` fixture (the bytes and what they were made from)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from fixturegen.certs.builder import Draft

if TYPE_CHECKING:
    from fixturegen.cases.context import BuildContext

Result = Literal["valid", "invalid", "acceptable"]
Importance = Literal["critical", "high", "medium", "low"]


@dataclass(frozen=True)
class Built:
    """What a case body returns."""

    #: The leaf's draft: certificate key, algorithm, host key, TBS fields.
    draft: Draft
    #: The presented certificates as files, leaf first (one file in all but the chain cases).
    files: tuple[bytes, ...]
    #: The signature scheme name the manifest states for the leaf.
    scheme: str
    #: The PeerId the caller expects (peer_id_mismatch cases), passed to the verifier.
    expect_peer_id: str | None = None
    extension_critical: bool = False


@dataclass(frozen=True)
class Case:
    id: str
    description: str
    result: Result
    build: Callable[[BuildContext], Built] = field(repr=False)
    #: The code the reference verifier must give (None: it accepts).
    error: str | None = None
    flags: tuple[str, ...] = ()
    importance: Importance | None = None
    #: The spec rule this case tests, for reports ("tls.md: ...").
    rule: str = ""


CATALOGUE: list[Case] = []


def describe(fn: Callable[..., object]) -> str:
    return " ".join(inspect.cleandoc(fn.__doc__ or "").split())


def register(c: Case) -> Case:
    if any(existing.id == c.id for existing in CATALOGUE):
        raise ValueError(f"duplicate case id {c.id}")
    CATALOGUE.append(c)
    return c


def case(
    id: str,
    result: Result,
    error: str | None = None,
    *,
    flags: tuple[str, ...] = (),
    importance: Importance | None = None,
    rule: str = "",
) -> Callable[[Callable[[BuildContext], Built]], Callable[[BuildContext], Built]]:
    """Register a case; its docstring is the description."""

    def wrap(fn: Callable[[BuildContext], Built]) -> Callable[[BuildContext], Built]:
        register(Case(id, describe(fn), result, fn, error, flags, importance, rule))
        return fn

    return wrap
