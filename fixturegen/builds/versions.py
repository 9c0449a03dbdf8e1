"""Version strings of four ecosystems, ordered, and the ``--versions`` SPEC.

crates.io and npm use SemVer, the Go module proxy SemVer with a ``v``, PyPI PEP 440. One
:class:`Version` orders all of them: numeric release parts, then pre-releases before the
release (``1.0.0-alpha < 1.0.0``; PEP 440's ``a``/``b``/``rc``/``.dev`` likewise), identifiers
compared as SemVer says (numbers numerically, below words).

A SPEC is a comma-separated list of items: ``all`` (every release that carries the verifier),
``minors`` (the newest patch of each minor line), ``latest``, an exact version (``v0.48.0``),
or a comparison (``>=0.4``, ``<0.7``, ``==0.5.1``, ``!=0.6.0``). Exact versions and keywords
select (their union); comparisons then filter that selection, or every release when nothing
else selects. ``>=0.4,<0.7`` is every release from 0.4 up to 0.7; ``v0.45.0,v0.48.0`` two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import total_ordering

_NUMBERS = re.compile(r"v?(\d+(?:\.\d+)*)(.*)", re.DOTALL)
_PEP440_PRE = re.compile(r"[-_.]?(a|alpha|b|beta|c|rc|pre|preview|dev|post)[-_.]?(\d*)", re.I)
_PEP440_RANK = {"dev": -4, "a": -3, "alpha": -3, "b": -2, "beta": -2, "c": -1, "rc": -1,
                "pre": -1, "preview": -1, "post": 1}
_COMPARISON = re.compile(r"(>=|<=|==|!=|>|<)\s*(\S+)")
MAX_SPEC = 4096


class VersionError(ValueError):
    """A version or a SPEC that cannot be read (a usage error)."""


@total_ordering
@dataclass(frozen=True)
class Version:
    """A released version as its registry names it (``0.7.0``, ``v0.52.0``, ``0.8.1rc1``)."""

    text: str
    key: tuple[object, ...] = field(compare=False, repr=False, hash=False, default=())

    @classmethod
    def parse(cls, text: str) -> Version:
        return cls(text, _key(text))

    @property
    def release(self) -> tuple[int, ...]:
        numbers = self.key[0]
        assert isinstance(numbers, tuple)
        return numbers

    @property
    def prerelease(self) -> bool:
        stage = self.key[1]
        assert isinstance(stage, tuple)
        return bool(stage[0] == 0)

    @property
    def minor_line(self) -> tuple[int, ...]:
        """(major, minor): the line whose newest patch ``minors`` keeps."""
        release = (*self.release, 0, 0)
        return release[:2]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.key < other.key

    def __str__(self) -> str:
        return self.text


def _key(text: str) -> tuple[object, ...]:
    match = _NUMBERS.fullmatch(text.strip()) if text.isascii() else None  # '²' is a \d
    if match is None or len(text) > 128:
        raise VersionError(f"{text[:80]!r} is not a version (e.g. 0.7.0, v0.52.0, 3.1.10)")
    numbers = tuple(int(part) for part in match.group(1).split("."))
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]  # 1.0 == 1.0.0
    rest = match.group(2).split("+", 1)[0]  # SemVer build metadata does not order
    if not rest:
        return (numbers, (1,))
    if rest.startswith("-"):  # SemVer pre-release: 1.0.0-alpha.1
        ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in rest[1:].split("."))
        return (numbers, (0, ids))
    pieces = _PEP440_PRE.findall(rest)
    if pieces and "".join(f"{a}{b}" for a, b in pieces) == re.sub(r"[-_.]", "", rest).lower():
        ranks = tuple((_PEP440_RANK[word.lower()], int(n or 0)) for word, n in pieces)
        if ranks[0][0] > 0:  # a post-release orders after the release
            return (numbers, (2, ranks))
        return (numbers, (0, ((0, 0, ""),), ranks))
    raise VersionError(f"{text[:80]!r} is not a version (e.g. 0.7.0, v0.52.0, 3.1.10)")


def same(a: str, b: str) -> bool:
    """``a`` and ``b`` name the same version (``0.48.0`` and ``v0.48.0`` do)."""
    try:
        return Version.parse(a) == Version.parse(b)
    except VersionError:
        return a == b


@dataclass(frozen=True)
class Spec:
    """A parsed ``--versions`` SPEC."""

    text: str
    keywords: frozenset[str]
    exact: tuple[str, ...]
    comparisons: tuple[tuple[str, Version], ...]

    def select(self, available: Sequence[Version]) -> list[Version]:
        """The versions of ``available`` the SPEC names, oldest first. An exact version that
        is not available is kept (so that its build can say the registry does not serve it)."""
        ordered = sorted(set(available))
        releases = [v for v in ordered if not v.prerelease]
        chosen: set[Version] = set()
        if "all" in self.keywords or not (self.keywords or self.exact):
            chosen |= set(releases)
        if "minors" in self.keywords:
            newest: dict[tuple[int, ...], Version] = {}
            for v in releases:
                newest[v.minor_line] = v
            chosen |= set(newest.values())
        if "latest" in self.keywords and releases:
            chosen.add(releases[-1])
        by_text = {v.text: v for v in ordered}
        for text in self.exact:
            found = by_text.get(text) or next((v for v in ordered if same(v.text, text)), None)
            chosen.add(found or Version.parse(text))
        return sorted(v for v in chosen if all(_holds(v, op, bound)
                                               for op, bound in self.comparisons))


def _holds(v: Version, op: str, bound: Version) -> bool:
    return {">=": v >= bound, "<=": v <= bound, ">": v > bound, "<": v < bound,
            "==": v == bound, "!=": v != bound}[op]


def parse_spec(text: str) -> Spec:
    """A ``--versions`` SPEC; :class:`VersionError` names the item it cannot read."""
    if not text.strip() or len(text) > MAX_SPEC:
        raise VersionError("--versions: give all, minors, latest, versions or comparisons "
                           "(e.g. '>=0.4,<0.7' or 'v0.45.0,v0.48.0')")
    keywords: set[str] = set()
    exact: list[str] = []
    comparisons: list[tuple[str, Version]] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue  # 'v0.45.0,' is one version; ',,,' names none (refused below)
        if item in ("all", "minors", "latest"):
            keywords.add(item)
        elif (match := _COMPARISON.fullmatch(item)) is not None:
            comparisons.append((match.group(1), Version.parse(match.group(2))))
        else:
            Version.parse(item)  # raises for what is not a version
            exact.append(item)
    if not (keywords or exact or comparisons):
        raise VersionError(f"--versions {text!r} names no version: give all, minors, latest, "
                           "versions or comparisons")
    return Spec(text, frozenset(keywords), tuple(exact), tuple(comparisons))


def newest_first(versions: Iterable[Version]) -> list[Version]:
    return sorted(versions, reverse=True)
