"""Profiles: the test assets of one implementation's repository, under its own file names, made
by one command (``fixturegen profile NAME --out DIR``) instead of hand-kept openssl scripts.

A profile is a list of :class:`Asset` s; each is a catalogue-style case (a build function and
the reference verifier's verdict) plus the file name the repository loads and what its tests
may assert about it. ``write`` renders them, writes the files, a manifest in the usual schema
and a ``REGENERATE.md`` for the target repository.
"""

from __future__ import annotations

from fixturegen.profiles import rust_libp2p
from fixturegen.profiles.model import Asset, Profile

__all__ = ["Asset", "Profile", "profiles"]


def profiles() -> dict[str, Profile]:
    """Every profile, by name (a new one: a module here, and its entry below)."""
    return {p.name: p for p in (rust_libp2p.PROFILE,)}
