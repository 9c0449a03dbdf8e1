"""The valid matrix: every certificate signature scheme x every host key type x fixed and
throwaway certificate keys; the critical-extension variants; larger RSA moduli."""

from __future__ import annotations

from fixturegen.cases.context import BuildContext, Built
from fixturegen.cases.invalid import SAME_FAMILY_KEYS
from fixturegen.cases.model import Result, case
from fixturegen.certs.schemes import SCHEMES
from fixturegen.keys import HOST_KEY_TYPES, KeyKind, Source
from fixturegen.verify.codes import Flag

RULE = "tls.md: Peer Authentication; the libp2p Public Key Extension"
#: The matrix's host key types, in id order.
HOST_TYPES = ("Ed25519", "Secp256k1", "ECDSA", "RSA")
assert set(HOST_TYPES) == set(HOST_KEY_TYPES)


def _label(host_type: str) -> str:
    """A host key type in a case id: its default kind, ECDSA keys with the prefix ``ecdsa-``."""
    kind = KeyKind.for_host_type(host_type)
    return f"ecdsa-{kind}" if host_type == "ECDSA" else str(kind)


def _result(scheme: str, **_: object) -> Result:
    return "acceptable" if SCHEMES[scheme].borderline_flag else "valid"


def _flags(scheme: str, **_: object) -> tuple[Flag, ...]:
    flag = SCHEMES[scheme].borderline_flag
    return (flag,) if flag else ()


# Scheme by scheme: its matrix, then its critical variant (the manifest's order).
for _scheme in SCHEMES:
    @case("matrix.{scheme}.{label}.{source}", _result, flags=_flags, rule=RULE, each=[
        {"scheme": _scheme, "kind": SCHEMES[_scheme].key_kind, "host_type": h,
         "label": _label(h), "source": source}
        for h in HOST_TYPES for source in ("fixed", "throwaway")])
    def matrix(ctx: BuildContext, scheme: str, host_type: str, source: Source, **_: object
               ) -> Built:
        """A valid certificate signed with {scheme} by a {source} {kind} certificate key,
        carrying a non-critical libp2p extension for a throwaway {host_type} host key."""
        return ctx.built(ctx.draft(scheme, cert_source=source, host=ctx.host(host_type)))

    @case("critical.{scheme}", _result, rule=RULE, each=[{"scheme": _scheme}],
          flags=lambda scheme: (*_flags(scheme), Flag.CRITICAL_LIBP2P_EXTENSION))
    def critical(ctx: BuildContext, scheme: str) -> Built:
        """As matrix.{scheme}.ed25519.fixed, with the libp2p extension marked critical, which
        the spec allows (an endpoint that understands it must accept)."""
        d = ctx.draft(scheme, cert_source="fixed", host=ctx.host("Ed25519"), critical=True)
        return ctx.built(d, critical=True)


@case("rsa-size.{scheme}.{kind}", "valid", rule=RULE, each=[
    {"scheme": s, "kind": k, "bits": k.rsa_bits}
    for k in (KeyKind.RSA_3072, KeyKind.RSA_4096)
    for s in ("rsa_pkcs1_sha256", "rsa_pss_rsae_sha384")])
def rsa_size(ctx: BuildContext, scheme: str, kind: KeyKind, bits: int) -> Built:
    """A valid certificate signed with {scheme} by the fixed RSA-{bits} key (rust-libp2p accepts
    moduli of 2048 to 8192 bits)."""
    d = ctx.draft(scheme, cert_source="fixed", cert_kind=kind, host=ctx.host("Ed25519"))
    return ctx.built(d)


@case("host-rsa-8192", "valid", rule="peer-ids.md: RSA (no size set); go-libp2p: 2048..8192")
def host_rsa_8192(ctx: BuildContext) -> Built:
    """A valid P-256 certificate whose host key is RSA-8192, the largest RSA host key go-libp2p
    and js-libp2p accept (and generate); the fixed RSA-8192 key."""
    return ctx.built(ctx.draft(host=ctx.host("RSA", kind=KeyKind.RSA_8192, source="fixed")))


@case("host-ecdsa-p384", "valid", rule="peer-ids.md: ECDSA")
def host_ecdsa_p384(ctx: BuildContext) -> Built:
    """A valid P-256 certificate whose host key is ECDSA on P-384: the host signature is still
    over SHA-256 (peer-ids.md: ECDSA signs SHA-256 of the message on every curve)."""
    return ctx.built(ctx.draft(host=ctx.host("ECDSA", kind=KeyKind.P384)))


@case("host-key-is-certificate-key.{name}", "valid", rule=RULE + " (the certificate key "
      "SHOULD NOT be related to the host key: a sender's rule; nothing tells a receiver to "
      "abort)", each=SAME_FAMILY_KEYS)
def host_key_is_certificate_key(ctx: BuildContext, host_type: str, scheme: str,
                                name: str) -> Built:
    """The {host_type} host key is the certificate key too: one key pair signs the certificate
    and, over its own SubjectPublicKeyInfo, the libp2p extension. Both signatures are valid.
    The valid twin of invalid.host-key-is-certificate-key.signature-corrupted.{name}."""
    host = ctx.host(host_type)
    return ctx.built(ctx.draft(scheme, cert_key=host.pair, host=host))
