"""The catalogue: a :class:`Case` is what to build and what a verifier must say; :func:`case`
is the one way to declare one; :meth:`Case.render` builds it into the manifest's model.

A case is a small function taking a :class:`BuildContext` and returning a :class:`Built`; its
docstring is its description. A family of cases (one per scheme, host key type, ...) is one
function with ``each``: the id and the docstring are templates filled from each parameter set,
and the parameters are passed to the function as keywords::

    @case("invalid.expired", "invalid", ErrorCode.EXPIRED, importance="medium", rule=...)
    def expired(ctx: BuildContext) -> Built:
        \"\"\"notAfter is 2000-12-31T23:59:59Z: expired at any time this corpus is used.\"\"\"

    @case("invalid.self-signature-corrupted.{scheme}", "invalid", ...,
          each=[{"scheme": s} for s in SCHEMES])
    def corrupted(ctx: BuildContext, scheme: str) -> Built:
        \"\"\"One bit of the {scheme} self-signature is flipped.\"\"\"
"""

from __future__ import annotations

import hashlib
import inspect
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fixturegen.cases.context import BuildContext, Built
from fixturegen.keys import KeyKind, KeyPair
from fixturegen.model.manifest import (
    CertificateInfo,
    Expected,
    Family,
    Fixture,
    HostKeyInfo,
    KeyInfo,
)
from fixturegen.verify.codes import ErrorCode, Flag

Result = Literal["valid", "invalid", "acceptable"]
Importance = Literal["critical", "high", "medium", "low"]
Params = Mapping[str, Any]


@dataclass(frozen=True)
class Rendered:
    """One case, built: its manifest entry and its files (plain data: it crosses processes)."""

    fixture: Fixture
    files: tuple[tuple[str, bytes], ...]

    @property
    def key_pem(self) -> bytes:
        """The certificate key's PKCS#8 PEM (every generated case has one)."""
        path = self.fixture.certificate_key_path
        assert path is not None, self.fixture.id
        return dict(self.files)[path]


@dataclass(frozen=True)
class Case:
    id: str
    description: str
    result: Result
    build: Callable[[BuildContext], Built] = field(repr=False)
    #: The code the reference verifier must give (None: it accepts).
    error: ErrorCode | None = None
    flags: tuple[Flag, ...] = ()
    importance: Importance | None = None
    #: The spec rule this case tests, for reports ("tls.md: ...").
    rule: str = ""
    #: The id template of the family it belongs to (its own id when it is alone), and the
    #: catalogue module that declares it (valid, invalid, acceptable, times): the
    #: documentation and the reports group cases by them.
    family: str = ""
    section: str = ""
    #: This case's value of each ``{name}`` in ``family`` (empty for a case declared alone).
    parameters: tuple[tuple[str, str], ...] = ()
    #: Other codes that are right reasons too (checks that fail as well, after the first):
    #: the manifest's ``expected.also``.
    also: tuple[ErrorCode, ...] = ()
    #: A valid case a verifier checks just before this one, in the same process (the
    #: manifest's ``after``): this case is built from that one, so that a verifier which
    #: remembers what it verified (a cache keyed by the wrong thing) answers from its memory.
    after: str = ""

    def render(self, seed: bytes, user_keys: dict[KeyKind, KeyPair] | None = None, *,
               built: Built | None = None) -> Rendered:
        """Build the case: its manifest entry (the model ``output/`` writes) and its files.
        ``user_keys`` replace the fixed keys of their kinds; ``built``: what :attr:`build`
        already gave for this seed and these keys (not built again)."""
        if built is None:
            built = self.build(BuildContext(seed, self.id, dict(user_keys or {})))
        d = built.draft
        paths = [f"certs/{self.id}.der"]
        paths += [f"certs/{self.id}.{i}.der" for i in range(2, len(built.files) + 1)]
        key_path = f"keys/{self.id}.pem"
        leaf = built.files[0]
        not_before, not_after = d.validity_text()
        fixture = Fixture(
            id=self.id, path=paths[0], chain=paths,
            sha256=hashlib.sha256(leaf).hexdigest(), sha512=hashlib.sha512(leaf).hexdigest(),
            description=self.description, rule=self.rule, flags=list(self.flags),
            importance=self.importance,
            certificate=CertificateInfo(
                signature_scheme=d.scheme,
                key=KeyInfo(type=d.cert_key.kind, source=d.cert_key.source,
                            file=d.cert_key.file,
                            fingerprint=d.cert_key.fingerprint
                            if d.cert_key.source == "user" else None),
                not_before=not_before, not_after=not_after, serial=d.serial_hex(),
                extension_critical=built.extension_critical,
            ),
            certificate_key_path=key_path,
            host_key=HostKeyInfo(
                type=d.host.type, kind=d.host.pair.kind,
                source="fixed" if d.host.pair.source == "fixed" else "throwaway",
                public_key_protobuf_hex=d.host.protobuf.hex(),
            ) if built.host is None else HostKeyInfo(
                type=built.host.type,  # type: ignore[arg-type]
                kind=built.host.kind, source="throwaway",
                public_key_protobuf_hex=built.host.protobuf.hex()),
            expect_peer_id=built.expect_peer_id,
            expected=Expected(result=self.result, error=self.error, also=list(self.also),
                              peer_id=None if self.result == "invalid" else (
                                  d.host.peer_id if built.host is None
                                  else built.host.peer_id)),
            family=Family(id=self.family, parameters=dict(self.parameters))
            if self.parameters else None,
            after=self.after or None,
        )
        files = (*zip(paths, built.files, strict=True), (key_path, d.cert_key.pkcs8_pem()))
        return Rendered(fixture, files)


CATALOGUE: list[Case] = []


def catalogue_version(cases: Iterable[Case] | None = None) -> str:
    """The catalogue's version, ``COUNT-DIGEST``: how many cases, and the first 12 hex digits
    of a SHA-256 over each case's id, expected result, error code, flags, other right
    reasons (``also``) and the case it is checked after (``after``; sorted by id). It
    changes exactly when a case is added, removed or expects something else, so a report read
    beside another tells a new case from a new divergence; the certificates' bytes are fixed
    by the fixturegen version and the seed."""
    chosen = sorted(CATALOGUE if cases is None else cases, key=lambda c: c.id)
    digest = hashlib.sha256()
    for c in chosen:
        line = "\t".join((c.id, c.result, c.error or "", ",".join(sorted(c.flags)))
                         + ((",".join(c.also),) if c.also else ())
                         + ((f"after={c.after}",) if c.after else ()))
        digest.update(line.encode() + b"\n")
    return f"{len(chosen)}-{digest.hexdigest()[:12]}"


def describe(text: str) -> str:
    """A docstring as one line."""
    return " ".join(inspect.cleandoc(text).split())


def template_values(template: str, params: Params) -> tuple[tuple[str, str], ...]:
    """Each ``{name}`` of an id template with the text it takes from ``params``, in order.
    A field is a plain name (no format spec, conversion, attribute or index), so that the id
    is always ``template.format(**values)``."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(f"id template {template!r}: {{{name}}} must be a plain name")
        names.append(name)
    return tuple((name, ("{" + name + "}").format(**params)) for name in dict.fromkeys(names))


def register(c: Case) -> None:
    """Add a case to the catalogue (what :func:`case` does for each case it declares)."""
    if any(existing.id == c.id for existing in CATALOGUE):
        raise ValueError(f"duplicate case id {c.id}")
    if c.also and (c.result != "invalid" or c.error is None or c.error in c.also):
        raise ValueError(f"case {c.id}: also names codes beside an invalid case's own error")
    if c.after:
        earlier = next((e for e in CATALOGUE if e.id == c.after), None)
        if earlier is None or earlier.result != "valid" or earlier.after:
            raise ValueError(f"case {c.id}: after must name a valid case declared before it, "
                             "itself checked after none")
    CATALOGUE.append(c)


def rebuilt(ctx: BuildContext, case_id: str) -> Built:
    """What the case ``case_id`` builds for this seed and these keys: the fixture a case
    checked ``after`` it starts from (the same bytes as that case's own fixture)."""
    earlier = next((e for e in CATALOGUE if e.id == case_id), None)
    if earlier is None:
        raise ValueError(f"no case {case_id}")
    return earlier.build(BuildContext(ctx.seed, case_id, ctx.user_keys))


def case(
    id: str,
    result: Result | Callable[..., Result],
    error: ErrorCode | None = None,
    *,
    flags: tuple[Flag, ...] | Callable[..., tuple[Flag, ...]] = (),
    importance: Importance | None = None,
    rule: str = "",
    each: Iterable[Params] | None = None,
    also: tuple[ErrorCode, ...] = (),
    after: str | Callable[..., str] = "",
) -> Callable[[Callable[..., Built]], Callable[..., Built]]:
    """Declare a case (or, with ``each``, a family): the function's docstring is the
    description. With ``each``, ``id`` and the docstring are ``str.format`` templates filled
    from each parameter set, and ``result``, ``flags`` and ``after`` may be functions of the
    parameters."""

    def wrap(fn: Callable[..., Built]) -> Callable[..., Built]:
        doc = fn.__doc__ or ""
        for params in (each if each is not None else [{}]):
            def build(ctx: BuildContext, _params: Params = params) -> Built:
                return fn(ctx, **_params)

            register(Case(
                id=id.format(**params),
                description=describe(doc.format(**params) if each is not None else doc),
                result=result(**params) if callable(result) else result,
                build=build, error=error, also=also,
                after=after(**params) if callable(after) else after,
                flags=flags(**params) if callable(flags) else flags,
                importance=importance, rule=rule, family=id,
                section=fn.__module__.rsplit(".", 1)[-1],
                parameters=template_values(id, params),
            ))
        return fn

    return wrap
