"""Invalid cases: each breaks exactly one rule of the spec and is otherwise valid.

Each case is a small function; its docstring is the description (the rule it breaks). After a
mutation inside tbsCertificate the certificate is re-signed, so that only the intended check
can fail. Dates are far from now (expired before 2001, not valid before 3000) so that no case
changes meaning as time passes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from fixturegen.cases.context import BuildContext, Built
from fixturegen.cases.model import case
from fixturegen.cases.mutate import (
    ber_outer_length,
    corrupt,
    host_signature,
    raw_ecdsa,
    self_signed_by,
    with_corrupted_self_signature,
    with_libp2p_value,
    with_rsa_pss_key,
)
from fixturegen.certs import der
from fixturegen.certs.builder import (
    OID_COMMON_NAME,
    OID_ORGANIZATION,
    assemble,
    derived_serial,
    draft,
    name,
)
from fixturegen.certs.extension import (
    extension,
    handshake_message,
    libp2p_extension,
    signed_key,
)
from fixturegen.certs.rsa_raw import private_op
from fixturegen.certs.schemes import SCHEMES, SigningAlgorithm
from fixturegen.identity.hostkey import HostKey
from fixturegen.identity.protobuf import KEY_TYPE_CODES, encode_public_key, varint
from fixturegen.keys import KeyKind, secp256k1
from fixturegen.verify.codes import ErrorCode, Flag

P256 = "ecdsa_secp256r1_sha256"
TLS = "tls.md: Peer Authentication"
EXT = "tls.md: libp2p Public Key Extension"
KEYS = "peer-ids.md: Keys"
X509 = "RFC 5280 / X.690 DER"
UNKNOWN_CRITICAL_OID = "1.3.6.1.4.1.53594.99.1"
RSA_ENCRYPTION_OID = "1.2.840.113549.1.1.1"


# -- the self-signature ---------------------------------------------------------------------------
@case("invalid.self-signature-corrupted.{scheme}", "invalid",
      ErrorCode.CERTIFICATE_SIGNATURE_INVALID, importance="high",
      rule=f"{TLS}: abort if the self-signature is invalid", each=[{"scheme": s} for s in SCHEMES])
def self_signature_corrupted(ctx: BuildContext, scheme: str) -> Built:
    """One bit of the {scheme} self-signature is flipped; everything else, the extension
    signature included, is valid."""
    d = ctx.draft(scheme)
    return ctx.built(d, files=(with_corrupted_self_signature(d),))


@case("invalid.self-signature-raw-r-s.{scheme}", "invalid",
      ErrorCode.CERTIFICATE_SIGNATURE_INVALID, importance="high",
      rule=f"{TLS}: abort if the self-signature is invalid",
      each=[{"scheme": "ecdsa_secp256r1_sha256", "size": 32},
            {"scheme": "ecdsa_secp384r1_sha384", "size": 48}])
def self_signature_raw_r_s(ctx: BuildContext, scheme: str, size: int) -> Built:
    """The {scheme} self-signature is the raw r||s (IEEE P1363, WebCrypto's) form of a valid
    signature over the tbsCertificate, not the DER Ecdsa-Sig-Value RFC 3279 2.2.3 requires: a
    verifier that falls back to r||s when DER decoding fails accepts it."""
    d = ctx.draft(scheme)
    tbs = d.tbs_der()
    signature = raw_ecdsa(d.signature(tbs), size)
    return ctx.built(d, files=(assemble(tbs, d.algorithm.algorithm_identifier(), signature),))


@case("invalid.issuer-differs-from-subject.self-signature-corrupted", "invalid",
      ErrorCode.CERTIFICATE_SIGNATURE_INVALID, importance="high",
      rule=f"{TLS}: abort if the self-signature is invalid")
def issuer_differs_self_signature_corrupted(ctx: BuildContext) -> Built:
    """Issuer and subject differ (acceptable.issuer-differs-from-subject) and one bit of the
    self-signature is flipped: a verifier that checks the self-signature only of a self-issued
    certificate (issuer = subject) lets it through."""
    d = ctx.draft(issuer=name((OID_ORGANIZATION, "fixturegen"), (OID_COMMON_NAME, "other CA")))
    return ctx.built(d, files=(with_corrupted_self_signature(d),))


@case("invalid.self-signature-pkcs1-declared-pss", "invalid",
      ErrorCode.CERTIFICATE_SIGNATURE_INVALID, importance="high",
      rule=f"{TLS}: abort if the self-signature is invalid")
def pkcs1_declared_pss(ctx: BuildContext) -> Built:
    """Both AlgorithmIdentifiers say RSASSA-PSS with SHA-256; the signature is a valid
    RSASSA-PKCS1-v1_5 SHA-256 signature by the same key, so under the declared algorithm it
    does not verify. Found by fixturegen fuzz: py-libp2p accepts it."""
    d = ctx.draft("rsa_pss_rsae_sha256")
    return ctx.built(d, files=(self_signed_by(d, SigningAlgorithm("rsa_pkcs1", "sha256")),))


@case("invalid.signature-algorithm-mismatch.ecdsa", "invalid",
      ErrorCode.SIGNATURE_ALGORITHM_MISMATCH,
      importance="medium",
      rule="RFC 5280 4.1.1.2: signatureAlgorithm MUST equal tbsCertificate.signature")
def mismatch_ecdsa(ctx: BuildContext) -> Built:
    """tbsCertificate.signature says ecdsa-with-SHA384; the outer signatureAlgorithm (and the
    signature, over SHA-256 with a P-256 key) says ecdsa-with-SHA256."""
    d = ctx.draft(P256)
    d = d.but(signature=SigningAlgorithm("ecdsa", "sha384").algorithm_identifier())
    return ctx.built(d)


@case("invalid.signature-algorithm-mismatch.rsa", "invalid", ErrorCode.SIGNATURE_ALGORITHM_MISMATCH,
      importance="medium",
      rule="RFC 5280 4.1.1.2: signatureAlgorithm MUST equal tbsCertificate.signature")
def mismatch_rsa(ctx: BuildContext) -> Built:
    """tbsCertificate.signature says sha256WithRSAEncryption; the outer signatureAlgorithm and
    the signature are RSA-PSS with SHA-256."""
    d = ctx.draft("rsa_pss_rsae_sha256")
    d = d.but(signature=SigningAlgorithm("rsa_pkcs1", "sha256").algorithm_identifier())
    return ctx.built(d)


#: A signature algorithm no library knows (a private arc of fixturegen's).
UNKNOWN_SIGNATURE_OID = "1.3.6.1.4.1.53594.99.2"


@case("invalid.signature-algorithm.unknown", "invalid",
      ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, importance="high",
      rule=f"{TLS}: abort if the self-signature is invalid; a signature under an unknown "
      "algorithm cannot be verified")
def unknown_signature_algorithm(ctx: BuildContext) -> Built:
    """Both AlgorithmIdentifiers (tbsCertificate.signature and signatureAlgorithm) name
    1.3.6.1.4.1.53594.99.2, an algorithm no library knows; the signature is the certificate
    key's ECDSA P-256/SHA-256 signature over that TBS. A verifier that skips a self-signature
    its library cannot check accepts it."""
    unknown = der.sequence(der.oid(UNKNOWN_SIGNATURE_OID))
    d = ctx.draft(P256)
    d = d.but(signature=unknown)
    return ctx.built(d, files=(d.sign(outer_algorithm=unknown),))


@case("invalid.outer-pss-mgf-oid", "invalid",
      ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, importance="medium",
      rule="RFC 4055 3.1: the mask generation function is MGF1 (1.2.840.113549.1.1.8)")
def pss_outer_mgf_oid(ctx: BuildContext) -> Built:
    """The outer signatureAlgorithm (not covered by the signature) names the mask generation
    function 1.6.840.113549.1.1.8 instead of MGF1; tbsCertificate.signature and the RSA-PSS
    signature are intact. Found by fixturegen fuzz: rust-libp2p accepts it."""
    d = ctx.draft("rsa_pss_rsae_sha256")
    good = d.algorithm.algorithm_identifier()
    mgf1, odd = der.oid("1.2.840.113549.1.1.8"), der.oid("1.6.840.113549.1.1.8")
    assert good.count(mgf1) == 1
    return ctx.built(d, files=(d.sign(outer_algorithm=good.replace(mgf1, odd)),))


@case("invalid.pss-default-parameters.{form}", "invalid",
      ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, importance="medium",
      rule="RFC 4055 3.1: RSASSA-PSS parameters absent or empty mean SHA-1, MGF1 with SHA-1, a "
           "20-byte salt; RFC 8446 4.2.3 and the rsa_pss_rsae schemes allow SHA-256 and up only",
      each=[{"form": "absent"}, {"form": "empty-sequence"}])
def pss_default_parameters(ctx: BuildContext, form: str) -> Built:
    """Both AlgorithmIdentifiers say id-RSASSA-PSS with its parameters {form}, which RFC 4055
    reads as SHA-1 (MGF1 with SHA-1, a 20-byte salt), a hash TLS 1.3 no longer allows; the
    signature is a valid RSA-PSS SHA-256 signature (salt 32). A verifier that fills in
    SHA-256 for parameters it did not read accepts it."""
    d = ctx.draft("rsa_pss_rsae_sha256")
    pss = der.oid("1.2.840.113549.1.1.10")
    bare = der.sequence(pss) if form == "absent" else der.sequence(pss, der.sequence())
    d = d.but(signature=bare)
    return ctx.built(d, files=(d.sign(outer_algorithm=bare),))


#: P-256's domain parameters (SEC 2 2.4.2), written out as RFC 3279's specifiedCurve.
_P256_P = 2**256 - 2**224 + 2**192 + 2**96 - 1
_P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
_P256_G = bytes.fromhex(
    "046B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296"
    "4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5")
_P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


@case("acceptable.ec-explicit-parameters", "acceptable", ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
      flags=(Flag.EC_EXPLICIT_PARAMETERS,),
      rule="RFC 5480 2.1.1: specifiedCurve MUST NOT be used in PKIX; RFC 8446 4.2.3: the "
           "ecdsa_secp256r1_sha256 scheme names the curve")
def ec_explicit_parameters(ctx: BuildContext) -> Built:
    """The P-256 certificate key's SubjectPublicKeyInfo spells the curve out (specifiedCurve:
    the prime field, a, b, the base point, the order, cofactor 1) instead of naming it; the
    values are P-256's, the self-signature and the libp2p extension (over this SPKI) are
    valid. Verifiers that understand named curves only refuse it (Go's crypto/x509, webpki,
    cryptography); OpenSSL reads it as P-256. A verifier that takes any parameters that are not
    a curve OID for P-256 accepts keys of other curves too."""
    d = ctx.draft()
    point = d.cert_key.spki[-65:]
    assert point[0] == 0x04
    parameters = der.sequence(
        der.integer(1),
        der.sequence(der.oid("1.2.840.10045.1.1"), der.integer(_P256_P)),
        der.sequence(der.octet_string((_P256_P - 3).to_bytes(32, "big")),
                     der.octet_string(_P256_B.to_bytes(32, "big"))),
        der.octet_string(_P256_G), der.integer(_P256_N), der.integer(1))
    spki = der.sequence(der.sequence(der.oid("1.2.840.10045.2.1"), parameters),
                        der.bit_string(point))
    extension = libp2p_extension(d.host, spki)
    return ctx.built(d.but(spki=spki, extensions=(extension, *d.tbs.extensions[1:])))


@case("invalid.certificate-key.ec-parameters-{form}", "invalid",
      ErrorCode.MALFORMED_CERTIFICATE, importance="medium",
      also=(ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,),
      rule="RFC 5480 2.1.1: the parameters of id-ecPublicKey MUST be present and, in PKIX, "
           "name the curve (namedCurve; implicitCurve NULL MUST NOT be used)",
      each=[{"form": "absent", "what": "no parameters at all (the AlgorithmIdentifier holds "
             "the OID alone)"},
            {"form": "null", "what": "NULL parameters (as RSA keys have)"}])
def ec_parameters_missing(ctx: BuildContext, form: str, what: str) -> Built:
    """The P-256 certificate key's SubjectPublicKeyInfo has {what} in place of the namedCurve
    OID; the point, the self-signature and the libp2p extension (over this SPKI) are P-256's
    and valid. With no curve named, the key cannot be read (the reference verifier: malformed),
    and no ECDSA scheme applies to it (unsupported_signature_scheme is a right reason too): a
    verifier that assumes P-256, or that panics on the missing parameters, gets it wrong."""
    d = ctx.draft()
    point = d.cert_key.spki[-65:]
    assert point[0] == 0x04
    algorithm = der.sequence(der.oid("1.2.840.10045.2.1"),
                             *((der.null(),) if form == "null" else ()))
    spki = der.sequence(algorithm, der.bit_string(point))
    extension = libp2p_extension(d.host, spki)
    return ctx.built(d.but(spki=spki, extensions=(extension, *d.tbs.extensions[1:])))


@case("invalid.p384-key-with-sha256", "invalid", ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
      importance="medium",
      rule="RFC 8446 4.2.3: ecdsa_secp384r1_sha384 pairs P-384 with SHA-384 only")
def p384_sha256(ctx: BuildContext) -> Built:
    """A P-384 certificate key signs with ecdsa-with-SHA256: curve and hash do not pair (the
    case of rust-libp2p's own nistp384_sha256.der)."""
    d = ctx.draft("ecdsa_secp384r1_sha256", algorithm=SigningAlgorithm("ecdsa", "sha256"),
                  cert_kind=KeyKind.P384)
    return ctx.built(d)


@case("invalid.self-signature-hash-mislabelled.{name}", "invalid",
      ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, importance="medium",
      rule="RFC 8446 4.2.3 / RFC 5758 3.2: the algorithm names the hash; each curve pairs one",
      each=[{"name": "p256-sha384", "kind": KeyKind.P256, "curve": "P-256", "label": "sha384",
             "signed": "sha256"},
            {"name": "p384-sha256", "kind": KeyKind.P384, "curve": "P-384", "label": "sha256",
             "signed": "sha384"}])
def hash_mislabelled(ctx: BuildContext, name: str, kind: KeyKind, curve: str, label: str,
                     signed: str) -> Built:
    """Both AlgorithmIdentifiers say ecdsa-with-{label}, which does not pair with the {curve}
    certificate key; the self-signature is a valid ECDSA signature over the {signed} hash, the
    one its curve pairs with. A verifier that takes the scheme from the curve alone (or from
    either of the two) accepts it; under the algorithm the certificate names, it does not
    verify. From litep2p's surviving mutants of signature_scheme (`&&` as `||`)."""
    d = ctx.draft(f"ecdsa_{kind.curve_name}_{label}", algorithm=SigningAlgorithm("ecdsa", label),
                  cert_kind=kind)
    return ctx.built(d, files=(self_signed_by(d, SigningAlgorithm("ecdsa", signed)),))


@case("invalid.rsa-pkcs1-parameters-not-null", "invalid",
      ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, importance="low",
      rule="RFC 4055 5 / RFC 8017 A.2.4: sha256WithRSAEncryption parameters MUST be NULL")
def rsa_pkcs1_parameters_not_null(ctx: BuildContext) -> Built:
    """The sha256WithRSAEncryption AlgorithmIdentifier (inside the TBS and outside it) carries
    an empty SEQUENCE as its parameters instead of NULL; the signature is a valid PKCS#1 one.
    Found by fixturegen fuzz: go-libp2p and rust-libp2p accept it."""
    d = ctx.draft("rsa_pkcs1_sha256")
    odd = der.sequence(der.oid("1.2.840.113549.1.1.11"), der.sequence())
    d = d.but(signature=odd)
    return ctx.built(d, files=(d.sign(outer_algorithm=odd),))


@case("invalid.rsa-sha1", "invalid", ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
      importance="medium",
      rule="RFC 8446 4.2.3: SHA-1 schemes are legacy, not for TLS 1.3 certificates")
def rsa_sha1(ctx: BuildContext) -> Built:
    """An RSA-2048 certificate signed with sha1WithRSAEncryption."""
    d = ctx.draft("rsa_pkcs1_sha1", algorithm=SigningAlgorithm("rsa_pkcs1", "sha1"),
                  cert_kind=KeyKind.RSA_2048, cert_source="fixed")
    return ctx.built(d)


# -- validity --------------------------------------------------------------------------------------
@case("invalid.expired", "invalid", ErrorCode.EXPIRED,
      importance="medium", rule=f"{TLS}: abort if the certificate is expired")
def expired(ctx: BuildContext) -> Built:
    """notAfter is 2000-12-31T23:59:59Z: expired at any time this corpus is used."""
    d = ctx.draft(not_before=datetime(1990, 1, 1, tzinfo=UTC),
                  not_after=datetime(2000, 12, 31, 23, 59, 59, tzinfo=UTC))
    return ctx.built(d)


@case("invalid.expired.ed25519-certificate", "invalid", ErrorCode.EXPIRED,
      importance="medium", rule=f"{TLS}: abort if the certificate is expired")
def expired_ed25519(ctx: BuildContext) -> Built:
    """invalid.expired with an Ed25519 certificate key (a self-signature by Ed25519): a
    verifier that checks dates only on the path of the certificate types its X.509 library
    verifies accepts it."""
    d = ctx.draft("ed25519", not_before=datetime(1990, 1, 1, tzinfo=UTC),
                  not_after=datetime(2000, 12, 31, 23, 59, 59, tzinfo=UTC))
    return ctx.built(d)


@case("invalid.not-yet-valid.ed25519-certificate", "invalid", ErrorCode.NOT_YET_VALID,
      importance="medium", rule=f"{TLS}: abort if the certificate is not yet valid")
def not_yet_valid_ed25519(ctx: BuildContext) -> Built:
    """invalid.not-yet-valid with an Ed25519 certificate key."""
    d = ctx.draft("ed25519", not_before=datetime(3000, 1, 1, tzinfo=UTC),
                  not_after=datetime(3001, 1, 1, tzinfo=UTC))
    return ctx.built(d)


@case("invalid.not-yet-valid", "invalid", ErrorCode.NOT_YET_VALID,
      importance="medium", rule=f"{TLS}: abort if the certificate is not yet valid")
def not_yet_valid(ctx: BuildContext) -> Built:
    """notBefore is 3000-01-01T00:00:00Z (GeneralizedTime)."""
    d = ctx.draft(not_before=datetime(3000, 1, 1, tzinfo=UTC),
                  not_after=datetime(3001, 1, 1, tzinfo=UTC))
    return ctx.built(d)


@case("invalid.validity-inverted", "invalid", ErrorCode.NOT_YET_VALID,
      importance="medium", rule=f"{TLS}: abort if the certificate is expired or not yet valid",
      also=(ErrorCode.EXPIRED,))
def validity_inverted(ctx: BuildContext) -> Built:
    """notBefore is 3000-01-01 and notAfter 1999-01-01: the dates in the wrong order, an
    empty validity window, so at any time the certificate is not yet valid and expired at once
    (the reference says not yet valid: it checks notBefore first; expired is a right reason
    too). A verifier that puts the dates back in order accepts it."""
    d = ctx.draft(not_before=datetime(3000, 1, 1, tzinfo=UTC),
                  not_after=datetime(1999, 1, 1, tzinfo=UTC))
    return ctx.built(d)


# -- encoding of the certificate ---------------------------------------------------------------
@case("invalid.version-v1-with-extensions", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low", rule="RFC 5280 4.1.2.1: extensions need version 3")
def version_v1(ctx: BuildContext) -> Built:
    """The version field is omitted (version 1) while the certificate carries extensions, the
    libp2p one included; it is re-signed. Found by fixturegen fuzz: py-libp2p accepts it."""
    return ctx.built(ctx.draft().but(version=b""))


@case("invalid.trailing-bytes", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low", rule=X509)
def trailing_bytes(ctx: BuildContext) -> Built:
    """Two zero bytes follow an otherwise valid DER certificate."""
    d = ctx.draft()
    return ctx.built(d, files=(d.sign() + b"\x00\x00",))


@case("invalid.signature-unused-bits", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low",
      rule="RFC 5280 4.1.1.3 / X.690: the signature BIT STRING has no unused bits")
def signature_unused_bits(ctx: BuildContext) -> Built:
    """The signatureValue BIT STRING says one bit of its last octet is unused (its first
    content octet is 01, not 00); the signature octets are the valid ones. Found by fixturegen
    fuzz: go-libp2p and py-libp2p's QUIC verifier accept it."""
    d = ctx.draft()
    tbs = d.tbs_der()
    cert = der.sequence(tbs, d.algorithm.algorithm_identifier(),
                        der.bit_string(d.signature(tbs), unused_bits=1))
    return ctx.built(d, files=(cert,))


@case("invalid.ber-length.certificate", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low", rule=X509)
def ber_length_outer(ctx: BuildContext) -> Built:
    """The outer Certificate SEQUENCE has a non-minimal long-form length (BER, not DER); the
    signed TBS is untouched, so the signature still verifies."""
    d = ctx.draft()
    return ctx.built(d, files=(ber_outer_length(d.sign()),))


@case("invalid.ber-length.tbs", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="low", rule=X509)
def ber_length_tbs(ctx: BuildContext) -> Built:
    """The subject Name inside tbsCertificate has a non-minimal length; the certificate is
    re-signed over that TBS, so only the encoding is wrong."""
    d = ctx.draft()
    subject = d.tbs.subject
    _, start, _ = der.split_tlv(subject)
    d = d.but(subject=der.ber_long_length(0x30, subject[start:]))
    return ctx.built(d)


@case("invalid.two-certificates", "invalid", ErrorCode.CHAIN_LENGTH,
      importance="medium", rule=f"{TLS}: abort if more than one certificate is received")
def two_certificates(ctx: BuildContext) -> Built:
    """The peer presents two certificates (the manifest's chain lists both): a valid leaf and a
    second valid, self-signed libp2p certificate."""
    leaf = ctx.draft()
    second = draft(ctx.throwaway(KeyKind.P256, "second-certificate"), leaf.algorithm,
                   ctx.host(role="second-host"), serial=derived_serial(f"{ctx.fixture_id}/2"))
    return ctx.built(leaf, files=(leaf.sign(), second.sign()))


@case("invalid.two-certificates.same", "invalid", ErrorCode.CHAIN_LENGTH,
      importance="medium", rule=f"{TLS}: abort if more than one certificate is received")
def two_certificates_same(ctx: BuildContext) -> Built:
    """The peer presents one valid certificate twice (the manifest's chain lists it twice): a
    verifier that asks for one distinct certificate, not for one certificate, accepts it."""
    leaf = ctx.draft()
    return ctx.built(leaf, files=(leaf.sign(), leaf.sign()))


# -- extensions ------------------------------------------------------------------------------------
@case("invalid.unknown-critical-extension", "invalid", ErrorCode.UNKNOWN_CRITICAL_EXTENSION,
      importance="medium",
      rule=f"{TLS}: abort on a critical extension the endpoint does not understand")
def unknown_critical(ctx: BuildContext) -> Built:
    """Besides the libp2p extension, a critical extension of an unknown (private) OID."""
    d = ctx.draft(extra_extensions=(extension(UNKNOWN_CRITICAL_OID, der.null(), critical=True),))
    return ctx.built(d)


@case("invalid.unknown-critical-extension.ed25519-certificate", "invalid",
      ErrorCode.UNKNOWN_CRITICAL_EXTENSION, importance="medium",
      rule=f"{TLS}: abort on a critical extension the endpoint does not understand")
def unknown_critical_ed25519(ctx: BuildContext) -> Built:
    """invalid.unknown-critical-extension with an Ed25519 certificate key."""
    d = ctx.draft("ed25519",
                  extra_extensions=(extension(UNKNOWN_CRITICAL_OID, der.null(), critical=True),))
    return ctx.built(d)


@case("invalid.unknown-critical-extension.after-critical-libp2p", "invalid",
      ErrorCode.UNKNOWN_CRITICAL_EXTENSION, importance="medium",
      rule=f"{TLS}: abort on a critical extension the endpoint does not understand")
def unknown_critical_after_libp2p(ctx: BuildContext) -> Built:
    """The libp2p extension is critical and first; an unknown critical extension follows it.
    A verifier that marks its own critical extension handled must still see the other one (a
    verifier that removes the libp2p OID from its list of unhandled critical extensions by
    cutting the list there, or by clearing it, lets the unknown one through)."""
    unknown = extension(UNKNOWN_CRITICAL_OID, der.null(), critical=True)
    return ctx.built(ctx.draft(critical=True, extra_extensions=(unknown,)))


@case("invalid.unknown-critical-extension.before-critical-libp2p", "invalid",
      ErrorCode.UNKNOWN_CRITICAL_EXTENSION, importance="medium",
      rule=f"{TLS}: abort on a critical extension the endpoint does not understand")
def unknown_critical_before_libp2p(ctx: BuildContext) -> Built:
    """An unknown critical extension comes first; the libp2p extension, critical too, follows
    it. The same fault as above in the other order: a verifier that looks only after (or only
    before) its own extension misses one of the two."""
    d = ctx.draft(critical=True)
    unknown = extension(UNKNOWN_CRITICAL_OID, der.null(), critical=True)
    return ctx.built(d.but(extensions=(unknown, *d.tbs.extensions)))


@case("invalid.extension-missing", "invalid", ErrorCode.EXTENSION_MISSING,
      importance="critical", rule=f"{EXT}: abort if the extension is missing")
def extension_missing(ctx: BuildContext) -> Built:
    """No libp2p extension; a non-critical subjectKeyIdentifier keeps the extensions non-empty."""
    d = ctx.draft()
    ski = extension("2.5.29.14", der.octet_string(b"\x01" * 20))
    return ctx.built(d.but(extensions=(ski,)))


@case("invalid.extension-missing.no-extensions", "invalid", ErrorCode.EXTENSION_MISSING,
      importance="critical", rule=f"{EXT}: abort if the extension is missing")
def no_extensions(ctx: BuildContext) -> Built:
    """A v3 certificate with no extensions field at all (found by mutation: js-libp2p reads
    extensions[0] and, with none, fails on undefined rather than on the missing extension)."""
    return ctx.built(ctx.draft().but(extensions=()))


@case("invalid.extension-duplicate.same", "invalid", ErrorCode.EXTENSION_DUPLICATE,
      importance="medium", rule=f"{EXT}; RFC 5280 4.2: an extension appears at most once")
def extension_duplicate_same(ctx: BuildContext) -> Built:
    """The same valid libp2p extension appears twice."""
    d = ctx.draft()
    return ctx.built(d.but(extensions=(d.tbs.extensions[0], d.tbs.extensions[0])))


@case("invalid.extension-duplicate.two-identities", "invalid", ErrorCode.EXTENSION_DUPLICATE,
      importance="critical", rule=f"{EXT}; RFC 5280 4.2: an extension appears at most once")
def extension_duplicate_two(ctx: BuildContext) -> Built:
    """Two libp2p extensions, each validly signed, for two different host keys: which identity
    is claimed depends on which one an implementation reads."""
    d = ctx.draft()
    other = libp2p_extension(ctx.host(role="second-host"), d.cert_key.spki)
    return ctx.built(d.but(extensions=(d.tbs.extensions[0], other)))


# -- SignedKey -------------------------------------------------------------------------------------
SIGNED_KEY_RULE = f"{EXT}: SignedKey ::= SEQUENCE {{ OCTET STRING, OCTET STRING }}"


def _with_signed_key(ctx: BuildContext, value: Callable[[bytes, bytes], bytes]) -> Built:
    """The default draft whose extension value is ``value(protobuf, valid host signature)``."""
    d = ctx.draft()
    return ctx.built(with_libp2p_value(d, value(d.host.protobuf, host_signature(d.host, d))))


@case("invalid.signed-key.not-a-sequence", "invalid", ErrorCode.EXTENSION_MALFORMED,
      importance="low", rule=SIGNED_KEY_RULE)
def signed_key_not_a_sequence(ctx: BuildContext) -> Built:
    """The extension value is a bare OCTET STRING holding the public key, not a SignedKey
    SEQUENCE."""
    return _with_signed_key(ctx, lambda pb, sig: der.octet_string(pb))


@case("invalid.signed-key.bit-strings", "invalid", ErrorCode.EXTENSION_MALFORMED,
      importance="low", rule=SIGNED_KEY_RULE)
def signed_key_bit_strings(ctx: BuildContext) -> Built:
    """SignedKey holds BIT STRINGs, as the spec's wording before July 2021 said; every
    implementation uses OCTET STRING."""
    return _with_signed_key(ctx, lambda pb, sig: der.sequence(der.bit_string(pb),
                                                              der.bit_string(sig)))


@case("invalid.signed-key.third-element", "invalid", ErrorCode.EXTENSION_MALFORMED,
      importance="low", rule=SIGNED_KEY_RULE)
def signed_key_third_element(ctx: BuildContext) -> Built:
    """SignedKey has a third element (an extra OCTET STRING)."""
    return _with_signed_key(ctx, lambda pb, sig: der.sequence(
        der.octet_string(pb), der.octet_string(sig), der.octet_string(b"\x00")))


@case("invalid.signed-key.elements-swapped", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="medium", rule=SIGNED_KEY_RULE)
def signed_key_elements_swapped(ctx: BuildContext) -> Built:
    """SignedKey holds its two OCTET STRINGs in the other order: the signature first, then the
    public key (both valid). The first element must be the key; a receiver that tries the other
    order when the first does not parse accepts a SignedKey no sender may write."""
    return _with_signed_key(ctx, lambda pb, sig: der.sequence(
        der.octet_string(sig), der.octet_string(pb)))


@case("invalid.signed-key.trailing-bytes", "invalid", ErrorCode.EXTENSION_MALFORMED,
      importance="low", rule=SIGNED_KEY_RULE)
def signed_key_trailing_bytes(ctx: BuildContext) -> Built:
    """Two bytes follow the SignedKey SEQUENCE in the extension value."""
    return _with_signed_key(ctx, lambda pb, sig: signed_key(pb, sig) + b"\x00\x00")


@case("invalid.signed-key.ber-length", "invalid", ErrorCode.EXTENSION_MALFORMED,
      importance="low", rule=SIGNED_KEY_RULE)
def signed_key_ber_length(ctx: BuildContext) -> Built:
    """The SignedKey SEQUENCE has a non-minimal long-form length."""
    return _with_signed_key(ctx, lambda pb, sig: der.ber_long_length(
        0x30, der.octet_string(pb) + der.octet_string(sig)))


@case("invalid.signed-key.ber-length-leading-zero", "invalid", ErrorCode.EXTENSION_MALFORMED,
      importance="low", rule=SIGNED_KEY_RULE)
def signed_key_ber_length_leading_zero(ctx: BuildContext) -> Built:
    """With an RSA host key the SignedKey is over 255 bytes; its length is written with a
    leading zero octet (83 00 01 xx), which DER forbids. Found by fixturegen fuzz:
    rust-libp2p accepts it (it refuses the short form of the same fault)."""
    host = ctx.host("RSA")
    d = ctx.draft(host=host)
    sk = der.octet_string(host.protobuf) + der.octet_string(host_signature(host, d))
    return ctx.built(with_libp2p_value(d, der.ber_long_length(0x30, sk)))


# -- the host key protobuf -----------------------------------------------------------------------
ENCODING_RULE = f"{KEYS}: deterministic encoding"


def _with_host_protobuf(ctx: BuildContext, protobuf: Callable[[int, bytes, bytes], bytes],
                        host_type: str = "Ed25519") -> Built:
    """``protobuf(type_code, data, canonical)`` gives the bytes to put in SignedKey.publicKey;
    the signature is the real host key's, so only the encoding is at fault."""
    host = ctx.host(host_type)
    d = ctx.draft(host=host)
    pb = protobuf(KEY_TYPE_CODES[host.type], host.data, host.protobuf)
    return ctx.built(with_libp2p_value(d, signed_key(pb, host_signature(host, d))))


@case("invalid.host-key.unknown-type", "invalid", ErrorCode.HOST_KEY_UNSUPPORTED,
      importance="medium", rule=ENCODING_RULE)
def host_key_unknown_type(ctx: BuildContext) -> Built:
    """The PublicKey Type is 4, which no spec defines."""
    return _with_host_protobuf(ctx, lambda t, data, pb: encode_public_key(4, data))


@case("invalid.host-key.fields-reversed", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="high", rule=ENCODING_RULE)
def host_key_fields_reversed(ctx: BuildContext) -> Built:
    """Data (field 2) comes before Type (field 1): valid protobuf, not the canonical encoding,
    so it would give another PeerId for the same key."""
    return _with_host_protobuf(
        ctx, lambda t, data, pb: b"\x12" + varint(len(data)) + data + b"\x08" + varint(t))


@case("invalid.host-key.type-missing", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="high", rule=ENCODING_RULE)
def host_key_type_missing(ctx: BuildContext) -> Built:
    """Only the Data field is present (Type is required)."""
    return _with_host_protobuf(ctx, lambda t, data, pb: b"\x12" + varint(len(data)) + data)


@case("invalid.host-key.extra-field", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="high", rule=ENCODING_RULE)
def host_key_extra_field(ctx: BuildContext) -> Built:
    """A third field (3, varint 0) follows Data: another PeerId for the same key."""
    return _with_host_protobuf(ctx, lambda t, data, pb: pb + b"\x18\x00")


@case("invalid.host-key.non-minimal-varint", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="high", rule=ENCODING_RULE)
def host_key_non_minimal_varint(ctx: BuildContext) -> Built:
    """The Data length 32 is written as a two-byte varint (a0 00)."""
    return _with_host_protobuf(
        ctx, lambda t, data, pb: b"\x08" + varint(t) + b"\x12\xa0\x00" + data)


@case("invalid.host-key.truncated", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="medium", rule=ENCODING_RULE)
def host_key_truncated(ctx: BuildContext) -> Built:
    """The protobuf's last byte is missing: Data is shorter than its length says."""
    return _with_host_protobuf(ctx, lambda t, data, pb: pb[:-1])


@case("invalid.host-key.ed25519-31-bytes", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="medium", rule=ENCODING_RULE)
def host_key_ed25519_31_bytes(ctx: BuildContext) -> Built:
    """An Ed25519 key whose Data is 31 bytes (a consistent length field)."""
    return _with_host_protobuf(ctx, lambda t, data, pb: encode_public_key(t, data[:31]))


@case("invalid.host-key.rsa-not-spki", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="medium", rule=ENCODING_RULE)
def host_key_rsa_not_spki(ctx: BuildContext) -> Built:
    """RSA key Data is a PKCS#1 RSAPublicKey, not the DER SubjectPublicKeyInfo the spec
    requires."""
    return _with_host_protobuf(
        ctx, lambda t, data, pb: encode_public_key(t, _pkcs1_of_spki(data)), "RSA")


def _pkcs1_of_spki(spki: bytes) -> bytes:
    """The RSAPublicKey inside an RSA SubjectPublicKeyInfo (the BIT STRING's content)."""
    bit_string = der.children(spki)[1]
    _, start, _ = der.split_tlv(bit_string)
    return bit_string[start + 1 :]


@case("invalid.host-key.secp256k1-uncompressed", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="medium", rule=f"{KEYS}: Secp256k1 Data is the 33-byte compressed point")
def secp256k1_uncompressed(ctx: BuildContext) -> Built:
    """A Secp256k1 host key whose Data is the 65-byte uncompressed point; the signature is the
    key's own and valid."""
    from cryptography.hazmat.primitives import serialization

    host = ctx.host("Secp256k1")
    d = ctx.draft(host=host)
    point = host.pair.private.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    pb = encode_public_key(2, point)
    return ctx.built(with_libp2p_value(d, signed_key(pb, host_signature(host, d))))


# -- the extension signature ---------------------------------------------------------------------
SIGNATURE_RULE = f"{EXT}: the receiver MUST verify the signature"


def _corrupted_extension_signature(ctx: BuildContext, host_type: str, scheme: str = P256
                                   ) -> Built:
    host = ctx.host(host_type)
    d = ctx.draft(scheme, cert_source="fixed", host=host)
    v = signed_key(host.protobuf, corrupt(host_signature(host, d)))
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.extension-signature-corrupted.{name}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="critical", rule=SIGNATURE_RULE,
      each=[{"host_type": h, "name": h.lower()} for h in ("Ed25519", "Secp256k1", "ECDSA", "RSA")])
def extension_signature_corrupted(ctx: BuildContext, host_type: str, name: str) -> Built:
    """One bit of the {host_type} host key's signature is flipped; the certificate is re-signed,
    so its self-signature is valid."""
    return _corrupted_extension_signature(ctx, host_type)


# The certificate keys of the handshake proof sets (transcripts): the same fault under each.
@case("invalid.extension-signature-corrupted.cert-{scheme}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="critical", rule=SIGNATURE_RULE,
      each=[{"scheme": s} for s in ("ecdsa_secp384r1_sha384", "ed25519", "rsa_pss_rsae_sha256")])
def extension_signature_corrupted_under(ctx: BuildContext, scheme: str) -> Built:
    """A {scheme} certificate whose Ed25519 host signature has one bit flipped; the
    self-signature is valid."""
    return _corrupted_extension_signature(ctx, "Ed25519", scheme)


@case("invalid.extension-signature.other-host-key", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID,
      importance="critical",
      rule=f"{EXT}: the signature is made by the host key in publicKey")
def other_host_key(ctx: BuildContext) -> Built:
    """publicKey names host key A; the signature is a valid one by host key B over the same
    message. Accepting it lets B claim A's PeerId."""
    d = ctx.draft()
    impostor = ctx.host(role="impostor")
    v = signed_key(d.host.protobuf, host_signature(impostor, d))
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.extension-signature.replayed", "invalid", ErrorCode.EXTENSION_SIGNATURE_INVALID,
      importance="critical",
      rule=f"{EXT}: the signature covers this certificate's SubjectPublicKeyInfo")
def replayed(ctx: BuildContext) -> Built:
    """The extension is copied from another certificate: the host key signed another
    certificate key's SPKI. Accepting it lets anyone replay a peer's extension."""
    d = ctx.draft()
    other = ctx.throwaway(KeyKind.P256, "other-certificate")
    v = signed_key(d.host.protobuf, d.host.sign(handshake_message(other.spki)))
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.extension-signature.no-prefix", "invalid", ErrorCode.EXTENSION_SIGNATURE_INVALID,
      importance="critical", rule=f"{EXT}: the signed message starts with 'libp2p-tls-handshake:'")
def no_prefix(ctx: BuildContext) -> Built:
    """The host key signed the bare SubjectPublicKeyInfo, without the libp2p-tls-handshake:
    prefix: the historical encoding of go-libp2p-tls before it adopted the prefix in March
    2019 (libp2p/go-libp2p-tls#25), and a signature that could be lifted from another
    protocol. The fault model has it in every context (extension-signature.no-prefix)."""
    d = ctx.draft()
    v = signed_key(d.host.protobuf, d.host.sign(d.cert_key.spki))
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.extension-signature.raw-r-s.{name}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="medium",
      rule="peer-ids.md: ECDSA and Secp256k1 signatures are DER",
      each=[{"host_type": h, "name": h.lower()} for h in ("ECDSA", "Secp256k1")])
def raw_r_s(ctx: BuildContext, host_type: str, name: str) -> Built:
    """The {host_type} host signature is the raw r||s (IEEE P1363, what WebCrypto produces) form
    of a valid signature, not DER."""
    host = ctx.host(host_type)
    d = ctx.draft(host=host)
    v = signed_key(host.protobuf, raw_ecdsa(host_signature(host, d), 32))
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.extension-signature.compact-recoverable.secp256k1", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="medium",
      rule="peer-ids.md: Secp256k1 signatures are DER")
def compact_recoverable(ctx: BuildContext) -> Built:
    """The Secp256k1 host signature is the 65-byte compact recoverable form of a valid
    signature (Bitcoin's: 27 + 4 + recovery id, then r || s), not DER. A verifier
    that recovers the signer's key from it and compares keys accepts it."""
    host = ctx.host("Secp256k1")
    d = ctx.draft(host=host)
    r, s = decode_dss_signature(host_signature(host, d))
    key = host.pair.private
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    numbers = key.public_key().public_numbers()
    digest = hashlib.sha256(handshake_message(d.cert_key.spki)).digest()
    recid = secp256k1.recovery_id(digest, r, s, (numbers.x, numbers.y))
    compact = bytes([27 + 4 + recid]) + r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return ctx.built(with_libp2p_value(d, signed_key(host.protobuf, compact)))


@case("invalid.host-key.ecdsa-type-holds-secp256k1-point", "invalid",
      ErrorCode.HOST_KEY_MALFORMED, importance="high",
      rule="peer-ids.md: an ECDSA key's Data is a DER SubjectPublicKeyInfo")
def ecdsa_type_holds_secp256k1_point(ctx: BuildContext) -> Built:
    """The host key's Type is ECDSA but its Data is a Secp256k1 key in Secp256k1's own form
    (the 33-byte compressed point); the signature is that Secp256k1 key's (DER ECDSA over
    SHA-256, which both types use). A verifier that decodes ECDSA Data with the Secp256k1
    decoder accepts it and reports a PeerId no Secp256k1 or ECDSA key has."""
    host = ctx.host("Secp256k1")
    d = ctx.draft(host=host)
    pb = encode_public_key(KEY_TYPE_CODES["ECDSA"], host.data)
    return ctx.built(with_libp2p_value(d, signed_key(pb, host_signature(host, d))))


@case("invalid.host-key.rsa-spki-without-null", "invalid", ErrorCode.HOST_KEY_MALFORMED,
      importance="medium",
      rule=f"{KEYS}: RSA keys are DER SubjectPublicKeyInfo; RFC 3279 2.3.1: the rsaEncryption "
      "parameters MUST be NULL")
def rsa_spki_without_null(ctx: BuildContext) -> Built:
    """The RSA host key's Data is its SubjectPublicKeyInfo with the NULL parameters of
    rsaEncryption left out (the key itself, and its signature over the certificate key, are
    right). Not the DER the spec asks for, and not the bytes a PeerId of this key hashes: a
    verifier that re-encodes the key before deriving the PeerId names another peer."""
    host = ctx.host("RSA")
    d = ctx.draft(host=host)
    algorithm, bits = der.children(host.data)
    assert algorithm == der.sequence(der.oid(RSA_ENCRYPTION_OID), der.null())
    data = der.sequence(der.sequence(der.oid(RSA_ENCRYPTION_OID)), bits)
    pb = encode_public_key(KEY_TYPE_CODES["RSA"], data)
    return ctx.built(with_libp2p_value(d, signed_key(pb, host_signature(host, d))))


@case("invalid.host-key.wrapped-in-identity-multihash", "invalid",
      ErrorCode.HOST_KEY_MALFORMED, importance="high",
      rule=f"{EXT}: publicKey is the protobuf PublicKey (peer-ids.md: Keys)")
def wrapped_in_identity_multihash(ctx: BuildContext) -> Built:
    """publicKey holds the Ed25519 host key's protobuf wrapped in an identity multihash (00,
    its length, the protobuf): the bytes of its inlined PeerId, not a PublicKey; the signature
    is valid. A verifier that unwraps a multihash header before decoding accepts it."""
    host = ctx.host()
    d = ctx.draft(host=host)
    wrapped = b"\x00" + varint(len(host.protobuf)) + host.protobuf
    return ctx.built(with_libp2p_value(d, signed_key(wrapped, host_signature(host, d))))


#: A SHA-256 DigestInfo (RFC 8017 section 9.2) whose AlgorithmIdentifier has no parameters,
#: up to the digest's OCTET STRING header: the encoding with NULL is the only one it allows.
DIGEST_INFO_SHA256_WITHOUT_NULL = bytes.fromhex("302f300b060960864801650304020104" "20")


@case("invalid.host-signature.rsa-digest-info-without-null", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="medium",
      rule="peer-ids.md: RSA signatures are RSASSA-PKCS1-v1_5 with SHA-256; RFC 8017 "
      "section 9.2: the DigestInfo of SHA-256 carries NULL parameters")
def rsa_digest_info_without_null(ctx: BuildContext) -> Built:
    """An RSA host key's signature over the certificate key is a PKCS#1 v1.5 block whose
    DigestInfo leaves out the NULL parameters of SHA-256 (the digest itself is right): a
    verifier that parses the DigestInfo leniently, or tries both encodings, accepts it."""
    host = ctx.host("RSA")
    d = ctx.draft(host=host)
    key = host.pair.private
    assert isinstance(key, rsa.RSAPrivateKey)
    k = (key.key_size + 7) // 8
    t = DIGEST_INFO_SHA256_WITHOUT_NULL + hashlib.sha256(
        handshake_message(d.cert_key.spki)).digest()
    block = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
    signature = private_op(key, int.from_bytes(block, "big")).to_bytes(k, "big")
    return ctx.built(with_libp2p_value(d, signed_key(host.protobuf, signature)))


#: Host key types whose own key can be a certificate key, each with that key's scheme.
SAME_FAMILY_KEYS = [{"host_type": "Ed25519", "scheme": "ed25519", "name": "ed25519"},
                    {"host_type": "ECDSA", "scheme": "ecdsa_secp256r1_sha256",
                     "name": "ecdsa-p256"},
                    {"host_type": "RSA", "scheme": "rsa_pkcs1_sha256", "name": "rsa"}]
#: Host key types a verifier may support where ECDSA host keys are refused, each under a P-256
#: certificate key.
NOT_ECDSA_HOSTS = [{"host_type": "Ed25519", "name": "ed25519"},
                   {"host_type": "Secp256k1", "name": "secp256k1"},
                   {"host_type": "RSA", "name": "rsa"}]


@case("invalid.extension-signature.by-certificate-key.{name}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="critical",
      rule=f"{EXT}: the host key signs the certificate's public key",
      each=SAME_FAMILY_KEYS)
def by_certificate_key(ctx: BuildContext, host_type: str, scheme: str, name: str) -> Built:
    """The SignedKey names a {host_type} host key, but its signature over
    libp2p-tls-handshake:SPKI was made by the certificate key (a {scheme} key, so the
    signature has the host key type's form): anyone can make it, and a verifier that also
    tries the certificate key binds no host key to the certificate."""
    host = ctx.host(host_type)
    d = ctx.draft(scheme, host=host)
    v = signed_key(host.protobuf, HostKey(d.cert_key).sign(handshake_message(d.cert_key.spki)))
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.extension-signature.by-certificate-key.p256-under-{name}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="critical",
      rule=f"{EXT}: the host key signs the certificate's public key",
      each=NOT_ECDSA_HOSTS)
def by_certificate_key_under(ctx: BuildContext, host_type: str, name: str) -> Built:
    """The SignedKey names a {host_type} host key; its signature is an ECDSA P-256/SHA-256
    signature over libp2p-tls-handshake:SPKI by the certificate's own P-256 key (the form of
    the certificate key, not of the host key). A verifier that, when the host key's signature
    fails, tries the certificate key binds no host key: here the host key is of a type such
    verifiers support, so nothing else refuses it first."""
    host = ctx.host(host_type)
    d = ctx.draft(P256, host=host)
    v = signed_key(host.protobuf, HostKey(d.cert_key).sign(handshake_message(d.cert_key.spki)))
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.host-key-is-certificate-key.signature-corrupted.{name}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="critical",
      rule=f"{EXT}: the host key's signature must verify",
      each=SAME_FAMILY_KEYS)
def host_is_certificate_key_corrupted(ctx: BuildContext, host_type: str, scheme: str,
                                      name: str) -> Built:
    """The {host_type} host key is the certificate key too (its valid twin:
    host-key-is-certificate-key.{name}), and one bit of its extension signature is flipped: a
    verifier that skips the host signature when the two keys are the same accepts it."""
    host = ctx.host(host_type)
    d = ctx.draft(scheme, cert_key=host.pair, host=host)
    v = signed_key(host.protobuf, corrupt(host_signature(host, d)))
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.self-signature.by-host-key.{name}", "invalid",
      ErrorCode.CERTIFICATE_SIGNATURE_INVALID, importance="critical",
      rule=f"{TLS}: abort if the self-signature is invalid (made by the certificate's own key)",
      each=SAME_FAMILY_KEYS)
def self_signature_by_host_key(ctx: BuildContext, host_type: str, scheme: str,
                               name: str) -> Built:
    """A {host_type} certificate key and a {host_type} host key (two keys of one family); the
    extension is valid (the host key signs the certificate key), but the certificate is signed
    by the host key, not by its own key. A verifier that, when the self-signature fails, tries
    the host key as well (the key the PeerId names) accepts a certificate whose key never
    signed anything."""
    host = ctx.host(host_type)
    d = ctx.draft(scheme, host=host)
    assert d.cert_key.spki != host.pair.spki
    tbs = d.tbs_der()
    return ctx.built(d, files=(assemble(tbs, d.algorithm.algorithm_identifier(),
                                        d.algorithm.sign(host.pair.private, tbs,
                                                         d.pss_salt)),))


@case("invalid.extension-signature.ecdsa-trailing-byte", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="medium",
      rule="peer-ids.md: an ECDSA signature is one DER ECDSA-Sig-Value")
def ecdsa_trailing_byte(ctx: BuildContext) -> Built:
    """A valid DER ECDSA host signature followed by one zero byte: not a DER signature, and a
    second encoding of the same signature. Found by fixturegen fuzz: go-libp2p accepts it."""
    host = ctx.host("ECDSA")
    d = ctx.draft(host=host)
    v = signed_key(host.protobuf, host_signature(host, d) + b"\x00")
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.extension-signature.wrong-length", "invalid", ErrorCode.EXTENSION_SIGNATURE_INVALID,
      importance="critical", rule="RFC 8032: an Ed25519 signature is 64 bytes")
def wrong_length(ctx: BuildContext) -> Built:
    """The Ed25519 host signature is cut to 63 bytes."""
    d = ctx.draft()
    v = signed_key(d.host.protobuf, host_signature(d.host, d)[:63])
    return ctx.built(with_libp2p_value(d, v))


@case("invalid.extension-signature.ed25519-signed-message.{name}", "invalid",
      ErrorCode.EXTENSION_SIGNATURE_INVALID, importance="high",
      rule="RFC 8032 5.1.6: an Ed25519 signature is 64 bytes (NaCl's signed message, "
      "signature || message, is not a signature)",
      each=[{"name": "of-the-payload", "what": "the libp2p handshake message itself"},
            {"name": "of-another-message", "what": "another certificate key's handshake "
             "message, which the host key signed"}])
def ed25519_signed_message(ctx: BuildContext, name: str, what: str) -> Built:
    """The Ed25519 host signature holds what NaCl's crypto_sign (libsodium, PyNaCl's
    SigningKey.sign) returns, a signed message: a valid 64-byte signature followed by the
    message it signs, here {what}. A receiver that opens a signed message where a detached
    signature belongs verifies the message inside, not the one it should."""
    d = ctx.draft()
    if name == "of-the-payload":
        message = handshake_message(d.cert_key.spki)
    else:
        message = handshake_message(ctx.throwaway(KeyKind.P256, "other-certificate").spki)
    v = signed_key(d.host.protobuf, d.host.sign(message) + message)
    return ctx.built(with_libp2p_value(d, v))


# -- certificate keys outside the signature families --------------------------------------------
KEY_RULE = ("RFC 8446 4.2.3 / tls.md: the certificate key signs the handshake with a TLS 1.3 "
            "SignatureScheme")


@case("invalid.certificate-key.dsa.{signature}", "invalid",
      ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, importance="medium", rule=KEY_RULE,
      each=[{"signature": "self-signed", "what": "a valid"},
            {"signature": "self-signature-corrupted", "what": "a corrupted (one bit flipped)"}])
def dsa_certificate_key(ctx: BuildContext, signature: str, what: str) -> Built:
    """A DSA-2048 certificate key with {what} dsa-with-SHA256 self-signature and a valid
    extension. TLS 1.3 has no DSA SignatureScheme: the key can never sign the handshake."""
    d = ctx.draft("dsa_sha256", algorithm=SigningAlgorithm("dsa", "sha256"),
                  cert_kind=KeyKind.DSA_2048)
    if signature == "self-signed":
        return ctx.built(d)
    return ctx.built(d, files=(with_corrupted_self_signature(d),))


@case("invalid.certificate-key.{name}", "invalid", ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME,
      importance="medium", rule=KEY_RULE,
      each=[{"name": "x25519", "kind": KeyKind.X25519, "signer": KeyKind.ED25519,
             "scheme": "ed25519", "label": "An X25519"},
            {"name": "x448", "kind": KeyKind.X448, "signer": KeyKind.ED448,
             "scheme": "ed448", "label": "An X448"}])
def key_agreement_certificate_key(ctx: BuildContext, name: str, kind: KeyKind,
                                  signer: KeyKind, scheme: str, label: str) -> Built:
    """{label} certificate key: a key-agreement key, which cannot sign. The certificate carries
    a valid {scheme} signature by another key (which its own key cannot have made) and a valid
    extension."""
    d = ctx.draft(scheme, cert_kind=kind)
    return ctx.built(replace(d, signer=ctx.throwaway(signer, "signer")))


@case("invalid.certificate-key.rsa-pss-key-pkcs1-signature", "invalid",
      ErrorCode.UNSUPPORTED_SIGNATURE_SCHEME, flags=(Flag.RSA_PSS_KEY,), importance="medium",
      rule="RFC 4055: an id-RSASSA-PSS key makes RSASSA-PSS signatures only")
def rsa_pss_key_pkcs1_signature(ctx: BuildContext) -> Built:
    """An RSA-2048 certificate key under id-RSASSA-PSS (as in acceptable.rsa-pss-key), but
    self-signed with sha256WithRSAEncryption (PKCS#1 v1.5), which such a key may not make."""
    d = ctx.draft("rsa_pkcs1_sha256", cert_source="fixed")
    return ctx.built(with_rsa_pss_key(d))


# -- the PeerId the caller expects -----------------------------------------------------------------
@case("invalid.peer-id-mismatch", "invalid", ErrorCode.PEER_ID_MISMATCH,
      importance="critical", rule=f"{TLS}: a client MUST check the PeerId is the one it dialled")
def peer_id_mismatch(ctx: BuildContext) -> Built:
    """A valid certificate; the caller expects (expect_peer_id) the PeerId of another host key."""
    d = ctx.draft()
    return ctx.built(d, expect_peer_id=ctx.host(role="dialled").peer_id)

