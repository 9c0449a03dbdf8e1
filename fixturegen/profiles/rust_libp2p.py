"""rust-libp2p's ``transports/tls/src/test_assets/`` (loaded by ``certificate.rs``'s tests).

Its ``check_cert!`` tests parse eight files with ``parse_unverified``, assert that
``verify()`` fails and that ``signature_scheme()`` is the scheme the file name says;
``rsa_pss_sha384`` must pass ``parse`` (full verification) with RSA-PSS SHA-384, and
``nistp384_sha256`` must parse unverified while ``signature_scheme()`` fails. The old files
fail ``verify()`` only because their extension signature is a static, bogus one (and their
validity ended in January 2022).

* ``drop-in``: the eight ``check_cert!`` files carry exactly one fault, a corrupted extension
  signature, so every existing assertion holds unchanged.
* ``valid``: every file verifies; ``REGENERATE.md`` names the assertions to flip.
"""

from __future__ import annotations

from collections.abc import Callable

from fixturegen.cases import BuildContext, Built
from fixturegen.cases.mutate import corrupt, host_signature, with_libp2p_value
from fixturegen.certs.extension import signed_key
from fixturegen.certs.schemes import SigningAlgorithm
from fixturegen.keys import KeyKind, KeyPair
from fixturegen.profiles.model import Asset, Profile, ProfileError
from fixturegen.verify.codes import ErrorCode, Flag

RULE = "tls.md: Peer Authentication; the libp2p Public Key Extension"
#: file stem -> (TLS scheme, rustls::SignatureScheme)
CHECK_CERT = {
    "ed25519": ("ed25519", "ED25519"),
    "ed448": ("ed448", "ED448"),
    "rsa_pkcs1_sha256": ("rsa_pkcs1_sha256", "RSA_PKCS1_SHA256"),
    "rsa_pkcs1_sha384": ("rsa_pkcs1_sha384", "RSA_PKCS1_SHA384"),
    "rsa_pkcs1_sha512": ("rsa_pkcs1_sha512", "RSA_PKCS1_SHA512"),
    "nistp256_sha256": ("ecdsa_secp256r1_sha256", "ECDSA_NISTP256_SHA256"),
    "nistp384_sha384": ("ecdsa_secp384r1_sha384", "ECDSA_NISTP384_SHA384"),
    "nistp521_sha512": ("ecdsa_secp521r1_sha512", "ECDSA_NISTP521_SHA512"),
}
BORDERLINE = {"ed448": Flag.ED448_CERTIFICATE, "ecdsa_secp521r1_sha512": Flag.P521_CERTIFICATE}


def _check_cert(scheme: str, faulty: bool) -> Callable[[BuildContext], Built]:
    def build(ctx: BuildContext) -> Built:
        d = ctx.draft(scheme, host=ctx.host("Ed25519"))
        if not faulty:
            return ctx.built(d)
        v = signed_key(d.host.protobuf, corrupt(host_signature(d.host, d)))
        return ctx.built(with_libp2p_value(d, v))

    return build


def _pss_sha384(ctx: BuildContext) -> Built:
    return ctx.built(ctx.draft("rsa_pss_rsae_sha384", host=ctx.host("Ed25519")))


def _p384_sha256(ctx: BuildContext) -> Built:
    d = ctx.draft("ecdsa_secp384r1_sha256", algorithm=SigningAlgorithm("ecdsa", "sha256"),
                  cert_kind=KeyKind.P384, host=ctx.host("Ed25519"))
    return ctx.built(d)


def assets(variant: str) -> list[Asset]:
    faulty = variant == "drop-in"
    out = []
    for stem, (scheme, rustls) in CHECK_CERT.items():
        flag = BORDERLINE.get(scheme)
        if faulty:
            out.append(Asset(
                f"{stem}.der",
                f"A {scheme} certificate whose only fault is a corrupted (one bit) extension "
                "signature, by a throwaway Ed25519 host key.",
                f"`parse_unverified` succeeds; `verify()` fails (the extension signature); "
                f"`signature_scheme()` is `Ok(rustls::SignatureScheme::{rustls})`",
                "invalid", _check_cert(scheme, True), ErrorCode.EXTENSION_SIGNATURE_INVALID,
                importance="critical", rule=RULE))
        else:
            out.append(Asset(
                f"{stem}.der", f"A valid {scheme} certificate for a throwaway Ed25519 host key.",
                f"`parse_unverified` succeeds; `verify()` is Ok"
                f"{' where the backend supports ' + scheme if flag else ''}; "
                f"`signature_scheme()` is `Ok(rustls::SignatureScheme::{rustls})`",
                "acceptable" if flag else "valid", _check_cert(scheme, False),
                flags=(flag,) if flag else (), rule=RULE))
    out.append(Asset(
        "rsa_pss_sha384.der",
        "A valid RSA-PSS SHA-384 certificate (salt length 48, MGF1 with SHA-384) by a throwaway "
        "RSA-2048 key, for a throwaway Ed25519 host key.",
        "`parse` (full verification) succeeds; `signature_scheme()` is "
        "`Ok(rustls::SignatureScheme::RSA_PSS_SHA384)`", "valid", _pss_sha384, rule=RULE))
    out.append(Asset(
        "nistp384_sha256.der",
        "A P-384 certificate key signing with ecdsa-with-SHA256 (a pair no TLS 1.3 scheme "
        "names); the extension is valid.",
        "`parse_unverified` succeeds; `signature_scheme()` is an error", "invalid",
        _p384_sha256, ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, importance="medium",
        rule="RFC 8446 4.2.3: ecdsa_secp384r1_sha384 pairs P-384 with SHA-384 only"))
    return out


def _fixture(scheme: str, kind: KeyKind) -> Callable[[BuildContext], Built]:
    def build(ctx: BuildContext) -> Built:
        return ctx.built(ctx.draft(scheme, cert_kind=kind, cert_source="fixed",
                                   host=ctx.host("Ed25519")))

    return build


def keyed(key: KeyPair) -> list[Asset]:
    """rsa_fixture_{pkcs1,pss}_{sha256,sha384,sha512}.der: fully valid, signed with the
    repository's own RSA key (salt length = digest length), for a throwaway Ed25519 host key."""
    if not key.kind.rsa_bits:
        raise ProfileError(f"--certificate-key: rust-libp2p's rsa_fixture_* files need an RSA "
                           f"key, not {key.kind}")
    out = []
    for padding in ("pkcs1", "pss"):
        for h in ("sha256", "sha384", "sha512"):
            scheme = f"rsa_{'pss_rsae' if padding == 'pss' else 'pkcs1'}_{h}"
            out.append(Asset(
                f"rsa_fixture_{padding}_{h}.der",
                f"A valid {scheme} certificate signed with your RSA key, for a throwaway "
                "Ed25519 host key.",
                f"`parse` (full verification) succeeds; `signature_scheme()` is the "
                f"{scheme} scheme", "valid", _fixture(scheme, key.kind), rule=RULE))
    return out


PROFILE = Profile(
    name="rust-libp2p", repository="https://github.com/libp2p/rust-libp2p",
    folder="transports/tls/src/test_assets",
    summary="the ten certificates transports/tls/src/certificate.rs loads",
    variants={"drop-in": "the check_cert! files fail verify() by one fault (their assertions "
                         "hold unchanged)",
              "valid": "every file verifies (flip the verify().is_err() assertions)"},
    assets=assets, keyed=keyed)
