"""Borderline cases where the spec leaves room (``acceptable``), and valid cases that are easy
to get wrong. Each acceptable case's flag says what an implementation may do and why; the
reference verifier's own verdict is its ``error`` (None: it accepts)."""

from __future__ import annotations

from fixturegen.cases.context import BuildContext, Built
from fixturegen.cases.model import case
from fixturegen.cases.mutate import host_signature, with_libp2p_value, with_rsa_pss_key
from fixturegen.certs import der
from fixturegen.certs.builder import EMPTY_NAME, OID_COMMON_NAME, OID_ORGANIZATION, name
from fixturegen.certs.extension import extension, signed_key, subject_alt_name
from fixturegen.certs.schemes import SigningAlgorithm
from fixturegen.identity.hostkey import SECP256K1_ORDER, flip_s
from fixturegen.keys import KeyKind
from fixturegen.verify.codes import ErrorCode, Flag

TLS = "tls.md: Peer Authentication"
BASIC_CONSTRAINTS = "2.5.29.19"
KEY_USAGE = "2.5.29.15"
EXT_KEY_USAGE = "2.5.29.37"
SUBJECT_KEY_ID = "2.5.29.14"


def _basic_constraints(critical: bool) -> bytes:
    return extension(BASIC_CONSTRAINTS, der.sequence(), critical)  # cA FALSE (DEFAULT)


def _key_usage(critical: bool) -> bytes:
    return extension(KEY_USAGE, der.bit_string(b"\x80", unused_bits=7), critical)  # digitalSig


@case("acceptable.issuer-differs-from-subject", "acceptable",
      flags=(Flag.ISSUER_DIFFERS_FROM_SUBJECT,), rule=f"{TLS}: the certificate is self-signed")
def issuer_differs(ctx: BuildContext) -> Built:
    """Signed by its own key, but issuer and subject differ (self-signed, not self-issued). The
    spec only asks for a valid self-signature; an implementation that also requires issuer =
    subject rejects it."""
    d = ctx.draft(issuer=name((OID_ORGANIZATION, "fixturegen"), (OID_COMMON_NAME, "other CA")))
    return ctx.built(d)


@case("acceptable.subject-unique-id", "acceptable", flags=(Flag.UNIQUE_ID_PRESENT,),
      rule=f"{TLS}: senders MUST omit subjectUniqueId; receivers MAY abort")
def subject_unique_id(ctx: BuildContext) -> Built:
    """subjectUniqueID [2] is present. Senders must omit it; receivers may abort or ignore it."""
    d = ctx.draft()
    return ctx.built(d.but(subject_unique_id=der.implicit_primitive(2, b"\x00\x01\x02")))


@case("acceptable.issuer-unique-id", "acceptable", flags=(Flag.UNIQUE_ID_PRESENT,),
      rule=f"{TLS}: senders MUST omit issuerUniqueId; receivers MAY abort")
def issuer_unique_id(ctx: BuildContext) -> Built:
    """issuerUniqueID [1] is present. Senders must omit it; receivers may abort or ignore it."""
    d = ctx.draft()
    return ctx.built(d.but(issuer_unique_id=der.implicit_primitive(1, b"\x00\x01\x02")))


@case("acceptable.empty-subject-and-issuer", "acceptable", flags=(Flag.EMPTY_NAME,),
      rule="RFC 5280 4.1.2.4: issuer MUST be non-empty; the 2022 spec vectors have empty names")
def empty_names(ctx: BuildContext) -> Built:
    """Empty subject and issuer, as several implementations generated in 2022 (and the 2022 spec
    vectors have). Strict X.509 parsers reject empty issuers; libp2p verifiers accept them."""
    return ctx.built(ctx.draft(subject=EMPTY_NAME))


@case("acceptable.critical-basic-constraints", "acceptable", flags=(Flag.CRITICAL_KNOWN_EXTENSION,),
      rule=f"{TLS}: abort on a critical extension the endpoint does not understand")
def critical_basic_constraints(ctx: BuildContext) -> Built:
    """basicConstraints (cA false) marked critical: understood by X.509 verifiers, possibly
    unknown to a minimal libp2p verifier, which then must reject."""
    return ctx.built(ctx.draft(extra_extensions=(_basic_constraints(True),)))


@case("acceptable.critical-key-usage", "acceptable", flags=(Flag.CRITICAL_KNOWN_EXTENSION,),
      rule=f"{TLS}: abort on a critical extension the endpoint does not understand")
def critical_key_usage(ctx: BuildContext) -> Built:
    """keyUsage (digitalSignature) marked critical: understood by some verifiers, unknown to
    others."""
    return ctx.built(ctx.draft(extra_extensions=(_key_usage(True),)))


@case("acceptable.critical-subject-alt-name", "acceptable",
      flags=(Flag.CRITICAL_KNOWN_EXTENSION,),
      rule=f"{TLS}: abort on a critical extension the endpoint does not understand; RFC 5280 "
           "4.2.1.6: subjectAltName is critical when the subject is empty")
def critical_subject_alt_name(ctx: BuildContext) -> Built:
    """subjectAltName (dNSName libp2p.example) marked critical, as RFC 5280 requires when the
    subject is empty: X.509 libraries understand it (go-libp2p, js-libp2p over TCP and
    py-libp2p accept), a libp2p verifier that knows only its own extension rejects it
    (rust-libp2p, and js-libp2p over QUIC, which runs rust's crate). Found by fixturegen fuzz
    (operator extension-critical)."""
    san = subject_alt_name(critical=True)
    return ctx.built(ctx.draft(extra_extensions=(san,)))


@case("acceptable.high-s-secp256k1", "acceptable", flags=(Flag.HIGH_S_HOST_SIGNATURE,),
      rule="peer-ids.md: Secp256k1 (silent on low-S)")
def high_s(ctx: BuildContext) -> Built:
    """The Secp256k1 host signature is the high-S twin (r, n - s) of a valid low-S signature.
    The spec is silent on low-S; Bitcoin-derived verifiers (libsecp256k1) reject high S."""
    host = ctx.host("Secp256k1")
    d = ctx.draft(host=host)
    sig = flip_s(host_signature(host, d), SECP256K1_ORDER)
    return ctx.built(with_libp2p_value(d, signed_key(host.protobuf, sig)))


@case("acceptable.rsa-1024", "acceptable", ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
      flags=(Flag.WEAK_RSA_KEY,),
      rule="tls.md is silent on key sizes; rust-libp2p wants 2048..8192")
def rsa_1024(ctx: BuildContext) -> Built:
    """An RSA-1024 certificate key (rsa_pkcs1_sha256). The spec sets no minimum size; the
    reference verifier, like rust-libp2p, rejects RSA under 2048 bits."""
    return ctx.built(ctx.draft("rsa_pkcs1_sha256", cert_kind=KeyKind.RSA_1024))


@case("acceptable.host-key-rsa-{bits}", "acceptable", flags=(Flag.RSA_HOST_KEY_SIZE,),
      each=[{"bits": 1024}, {"bits": 8704}],
      rule="peer-ids.md sets no RSA key size; go-libp2p wants 2048..8192 bits")
def host_key_rsa_size(ctx: BuildContext, bits: int) -> Built:
    """A valid certificate whose RSA host key is outside 2048..8192 bits (1024: under the
    minimum go-libp2p enforces; 8704: over its maximum). The spec sets no size; the reference
    verifier accepts. The RSA-8704 key is the fixed one."""
    if bits == 1024:
        return ctx.built(ctx.draft(host=ctx.host("RSA", kind=KeyKind.RSA_1024)))
    return ctx.built(ctx.draft(host=ctx.host("RSA", kind=KeyKind.RSA_8704, source="fixed")))


@case("acceptable.pss-salt-length-{salt}", "acceptable", ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
      flags=(Flag.PSS_SALT_LENGTH,), each=[{"salt": 0}, {"salt": 20}],
      rule="RFC 8446 4.2.3: rsa_pss_rsae_* salt length = digest length")
def pss_salt_length(ctx: BuildContext, salt: int) -> Built:
    """RSA-PSS with SHA-256 and a salt length other than the hash length."""
    algorithm = SigningAlgorithm("rsa_pss", "sha256", salt_length=salt)
    d = ctx.draft("rsa_pss_rsae_sha256", algorithm=algorithm, cert_kind=KeyKind.RSA_2048,
                  cert_source="fixed")
    return ctx.built(d)


# -- valid, but easy to get wrong ----------------------------------------------------------------
@case("acceptable.rsa-pss-key", "acceptable", flags=(Flag.RSA_PSS_KEY,),
      rule="RFC 8446 4.2.3 / RFC 4055: rsa_pss_pss_* schemes; tls.md: any scheme the peer "
           "supports")
def rsa_pss_key(ctx: BuildContext) -> Built:
    """An RSA-2048 certificate key whose SubjectPublicKeyInfo says id-RSASSA-PSS (RFC 4055,
    no parameters), self-signed with RSASSA-PSS SHA-256 (TLS 1.3's rsa_pss_pss_sha256), with a
    valid extension over that SubjectPublicKeyInfo. OpenSSL makes such keys (``-newkey
    rsa-pss``)."""
    d = ctx.draft("rsa_pss_pss_sha256", algorithm=SigningAlgorithm("rsa_pss", "sha256"),
                  cert_kind=KeyKind.RSA_2048, cert_source="fixed")
    return ctx.built(with_rsa_pss_key(d))


@case("valid.libp2p-extension-not-first", "valid", rule=f"{TLS}: other extensions MAY be present")
def extension_not_first(ctx: BuildContext) -> Built:
    """The libp2p extension is the last of three (after subjectKeyIdentifier and a non-critical
    basicConstraints)."""
    d = ctx.draft()
    ski = extension(SUBJECT_KEY_ID, der.octet_string(bytes(range(20))))
    return ctx.built(d.but(extensions=(ski, _basic_constraints(False), d.tbs.extensions[0])))


@case("valid.libp2p-extension-among-others", "valid",
      rule=f"{TLS}: unknown non-critical extensions MUST be ignored")
def extension_among_others(ctx: BuildContext) -> Built:
    """A non-critical libp2p extension between non-critical keyUsage, extKeyUsage, a
    subjectAltName and an extension of an unknown private OID."""
    d = ctx.draft()
    eku = extension(EXT_KEY_USAGE, der.sequence(der.oid("1.3.6.1.5.5.7.3.1"),
                                                der.oid("1.3.6.1.5.5.7.3.2")))
    san = subject_alt_name()
    unknown = extension("1.3.6.1.4.1.53594.99.2", der.octet_string(b"ignored"))
    exts = (_key_usage(False), eku, d.tbs.extensions[0], san, unknown)
    return ctx.built(d.but(extensions=exts))


@case("acceptable.extended-key-usage-client-auth", "acceptable",
      flags=(Flag.EXTENDED_KEY_USAGE_WITHOUT_SERVER_AUTH,),
      rule=f"{TLS} (silent on key purposes); RFC 5280 4.2.1.12: the certificate is for the "
           "purposes listed")
def extended_key_usage_client_auth(ctx: BuildContext) -> Built:
    """A non-critical extKeyUsage naming clientAuth alone, what a dialler's certificate might
    carry. A verifier that checks purposes as for a TLS server (Go's crypto/x509 by default)
    rejects it; one that ignores the extension accepts."""
    eku = extension(EXT_KEY_USAGE, der.sequence(der.oid("1.3.6.1.5.5.7.3.2")))
    return ctx.built(ctx.draft(extra_extensions=(eku,)))


@case("valid.extended-key-usage-any", "valid",
      rule=f"{TLS}: unknown non-critical extensions MUST be ignored; RFC 5280 4.2.1.12: "
           "anyExtendedKeyUsage allows every purpose")
def extended_key_usage_any(ctx: BuildContext) -> Built:
    """A non-critical extKeyUsage naming anyExtendedKeyUsage alone: every purpose is allowed,
    so even a verifier that checks purposes accepts."""
    eku = extension(EXT_KEY_USAGE, der.sequence(der.oid("2.5.29.37.0")))
    return ctx.built(ctx.draft(extra_extensions=(eku,)))


@case("valid.ecdsa-short-integers", "valid",
      rule="X.690: a DER INTEGER is minimal, so r or s may be shorter than the curve size")
def ecdsa_short_integers(ctx: BuildContext) -> Built:
    """A P-256 certificate whose ECDSA self-signature has an r or s of at most 31 bytes (a
    DER INTEGER shorter than the curve size: implementations that expect 32 bytes fail)."""
    for attempt in range(100_000):
        subject = name((OID_ORGANIZATION, "fixturegen"),
                       (OID_COMMON_NAME, f"libp2p TLS fixture {attempt}"))
        d = ctx.draft(subject=subject)
        sig = d.signature()
        r_len, s_len = sig[3], sig[5 + sig[3]]
        if min(r_len, s_len) <= 31:
            return ctx.built(d)
    raise RuntimeError("no short ECDSA integer found")  # pragma: no cover

