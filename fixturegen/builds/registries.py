"""What each package registry serves: the released versions of a package, with their dates.

One function per ecosystem, each one bounded HTTP request to the registry the ecosystem's own
tools use: crates.io's sparse index (what cargo reads; it carries each version's publication
time), the Go module proxy (``$GOPROXY``'s first URL, else proxy.golang.org; its version list is
completed by probing, one request per version), the npm registry (``$npm_config_registry``,
else registry.npmjs.org) and PyPI's JSON API. Yanked and deprecated
versions are listed and marked; a registry that cannot be reached is a :class:`RegistryError`
with one line.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from fixturegen import __version__
from fixturegen.builds.versions import Version, VersionError

Ecosystem = Literal["crates", "go", "npm", "pypi"]
MAX_RESPONSE = 64 * 1024 * 1024  # the npm document of a busy package is a few MiB
TIMEOUT = 30.0
_AGENT = f"fixturegen/{__version__} (libp2p TLS conformance; version listing)"


class RegistryError(Exception):
    """A registry that cannot be reached or answers something unreadable."""


@dataclass(frozen=True)
class Released:
    version: Version
    date: str | None  # ISO 8601, as the registry gives it
    yanked: bool = False


def _get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": _AGENT,
                                                   "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            data: bytes = response.read(MAX_RESPONSE + 1)
    except urllib.error.HTTPError as exc:
        raise RegistryError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RegistryError(f"{url}: cannot reach the registry ({reason})") from None
    if len(data) > MAX_RESPONSE:
        raise RegistryError(f"{url}: answer over {MAX_RESPONSE} bytes")
    return data


def _json(url: str) -> Any:
    try:
        return json.loads(_get(url))
    except ValueError as exc:
        raise RegistryError(f"{url}: not JSON ({exc})") from None


def _version(text: object) -> Version | None:
    if not isinstance(text, str):
        return None
    try:
        return Version.parse(text)
    except VersionError:
        return None  # a tag no ecosystem orders: left out


def crates_index_path(name: str) -> str:
    """Where the sparse index keeps a crate (cargo's layout: 1/, 2/, 3/a/, ab/cd/)."""
    name = name.lower()
    if len(name) <= 2:
        return f"{len(name)}/{name}"
    if len(name) == 3:
        return f"3/{name[0]}/{name}"
    return f"{name[:2]}/{name[2:4]}/{name}"


def crates_index(name: str) -> list[dict[str, Any]]:
    """The crate's entries in crates.io's sparse index (what cargo reads): one per version,
    with its dependencies, ``yanked`` and ``pubtime``."""
    text = _get(f"https://index.crates.io/{crates_index_path(name)}").decode("utf-8", "replace")
    entries: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def crates(name: str) -> list[Released]:
    return [Released(v, entry.get("pubtime"), bool(entry.get("yanked")))
            for entry in crates_index(name) if (v := _version(entry.get("vers"))) is not None]


def go_proxy() -> str:
    for entry in os.environ.get("GOPROXY", "").replace("|", ",").split(","):
        if entry.startswith(("https://", "http://")):
            return entry.rstrip("/")
    return "https://proxy.golang.org"


def _go_escape(module: str) -> str:
    """The proxy's case encoding: an upper-case letter is '!' and its lower case."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in module)


def go(module: str, since: Version | None = None) -> list[Released]:
    """The proxy's ``@v/list`` is not always complete (a mirror may list a few versions and
    still serve others): every minor line from ``since`` to the newest listed one is also
    probed, patch by patch, until two in a row are not served."""
    base = f"{go_proxy()}/{_go_escape(module)}/@v"
    listed = [v for line in _get(f"{base}/list").decode("utf-8", "replace").split()
              if (v := _version(line)) is not None]

    def info(text: str) -> Released | None:
        try:
            data = _json(f"{base}/{text}.info")
        except RegistryError:
            return None
        when = data.get("Time") if isinstance(data, dict) else None
        return Released(Version.parse(text), when if isinstance(when, str) else None)

    def line(major: int, minor: int) -> list[Released]:
        found: list[Released] = []
        misses, patch = 0, 0
        while misses < 2 and patch < 100:
            got = info(f"v{major}.{minor}.{patch}")
            misses = 0 if got else misses + 1
            if got:
                found.append(got)
            patch += 1
        return found

    releases = [v for v in listed if not v.prerelease]
    lines: set[tuple[int, int]] = set()
    if since is not None and releases:
        low, high = since.minor_line, max(releases).minor_line
        for major in range(low[0], high[0] + 1):
            top = high[1] if major == high[0] else max(
                (v.minor_line[1] for v in releases if v.minor_line[0] == major), default=0)
            lines |= {(major, m) for m in range(low[1] if major == low[0] else 0, top + 1)}
    with ThreadPoolExecutor(max_workers=8) as pool:
        probed = [r for found in pool.map(lambda ml: line(*ml), sorted(lines)) for r in found]
        dated = {r.version: r for r in probed}
        rest = [v for v in listed if v not in dated]
        dated.update({r.version: r for r in pool.map(lambda v: info(v.text) or Released(v, None),
                                                     rest)})
    return list(dated.values())


def npm(name: str) -> list[Released]:
    registry = (os.environ.get("npm_config_registry")  # noqa: SIM112 (npm's own spelling)
                or "https://registry.npmjs.org").rstrip("/")
    data = _json(f"{registry}/{name.replace('/', '%2f')}")
    if not isinstance(data, dict):
        raise RegistryError(f"{registry}: no document for {name}")
    times: dict[str, Any] = data["time"] if isinstance(data.get("time"), dict) else {}
    out: list[Released] = []
    for text, meta in (data.get("versions") or {}).items():
        if (v := _version(text)) is not None:
            deprecated = isinstance(meta, dict) and bool(meta.get("deprecated"))
            out.append(Released(v, times.get(text), deprecated))
    return out


def pypi(name: str) -> list[Released]:
    data = _json(f"https://pypi.org/pypi/{urllib.parse.quote(name)}/json")
    out: list[Released] = []
    for text, files in (data.get("releases") or {}).items() if isinstance(data, dict) else []:
        if (v := _version(text)) is None or not files:
            continue  # a release with no file cannot be installed
        dates = sorted(f.get("upload_time_iso_8601") or "" for f in files if isinstance(f, dict))
        yanked = all(isinstance(f, dict) and f.get("yanked") for f in files)
        out.append(Released(v, dates[0] if dates and dates[0] else None, yanked))
    return out


LISTERS: dict[Ecosystem, Callable[[str], list[Released]]] = {
    "crates": crates, "npm": npm, "pypi": pypi}


def released(ecosystem: Ecosystem, package: str, since: Version | None = None
             ) -> list[Released]:
    """Every version the registry serves for ``package`` (from ``since`` on, when given),
    oldest first."""
    found = go(package, since) if ecosystem == "go" else LISTERS[ecosystem](package)
    return sorted((r for r in found if since is None or r.version >= since),
                  key=lambda r: r.version)
