"""A profile's value types: an :class:`Asset` (one file) and a :class:`Profile`."""


from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fixturegen.cases import BuildContext, Built
from fixturegen.cases.model import Case, Importance, Result
from fixturegen.keys import KeyPair
from fixturegen.verify.codes import ErrorCode, Flag


class ProfileError(Exception):
    """A usage error (exit code 2)."""


@dataclass(frozen=True)
class Asset:
    #: The file name the repository's tests load.
    file: str
    description: str
    #: What the repository's tests may assert about it.
    asserts: str
    result: Result
    build: Callable[[BuildContext], Built]
    error: ErrorCode | None = None
    flags: tuple[Flag, ...] = ()
    importance: Importance | None = None
    rule: str = ""

    def case(self, profile: str) -> Case:
        """The asset as a case; its id (so its keys) is the same in every variant."""
        stem = self.file.rsplit(".", 1)[0]
        return Case(f"profile.{profile}.{stem}", self.description, self.result,
                    self.build, self.error, self.flags, self.importance, self.rule)


@dataclass(frozen=True)
class Profile:
    name: str
    repository: str
    folder: str
    summary: str
    variants: dict[str, str]
    assets: Callable[[str], list[Asset]]
    #: The assets signed with a key the user brings (--certificate-key), or None.
    keyed: Callable[[KeyPair], list[Asset]] | None = None
