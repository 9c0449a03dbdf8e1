"""The verifier's vocabulary: its checks in order, its error codes, and the flags it reports.

Everything is written here once. :class:`Check` is the order of the checks: first that the input
is one strict-DER certificate, then the X.509 rules that need no libp2p knowledge (times,
algorithms, the self-signature, critical extensions), then the libp2p extension from the outside
in (present, unique, well-formed, a well-formed host key, its signature), then the caller's
expectation, and last, for a TLS 1.3 CertificateVerify vector, the third proof. Cheap structural
checks come before signature checks, and the certificate is proven self-consistent before its
claim of an identity is examined. The first failing check is the verdict.

:class:`ErrorCode` names each way a check fails; its members are in check order. :class:`Flag`
names each borderline feature, with the note that explains it once (as Project Wycheproof's
``notes``). The manifest's ``error_codes`` and ``notes``, the schema's enums and the
documentation's page of checks, codes and flags all come from these three enums.
:class:`SenderFlag` names what the sender's judgement (:mod:`fixturegen.verify.sender`) finds in
a certificate an implementation made, with the rule its sender broke. This module
imports nothing from the toolkit: the generator declares its expectations in the verifier's
words, never the reverse.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING


class Check(StrEnum):
    """One step of a verification, in the order the verifier runs them."""

    label: str

    if not TYPE_CHECKING:  # members are made from tuples; calls look a value up
        def __new__(cls, value: str, label: str) -> Check:
            member = str.__new__(cls, value)
            member._value_ = value
            member.label = label
            return member

    STRUCTURE = ("structure", "one strict-DER X.509 v3 certificate (no trailing bytes, no BER, "
                              "RFC 5280 times, no duplicate extension, a decodable key)")
    CHAIN_LENGTH = ("chain_length", "exactly one certificate presented")
    VALIDITY = ("validity", "validity at the validation time")
    SIGNATURE_SCHEME = ("signature_scheme", "a supported scheme whose key, curve and hash pair "
                                            "(no SHA-1, RSA 2048..8192, PSS = MGF1 same hash, "
                                            "salt = hash length)")
    SIGNATURE_ALGORITHM_MATCH = ("signature_algorithm_match",
                                 "tbsCertificate.signature = signatureAlgorithm")
    SELF_SIGNATURE = ("self_signature", "the self-signature")
    CRITICAL_EXTENSIONS = ("critical_extensions", "no critical extension but libp2p, "
                                                  "basicConstraints, keyUsage, extKeyUsage")
    EXTENSION_PRESENT = ("extension_present", "the libp2p extension is present")
    EXTENSION_UNIQUE = ("extension_unique", "the libp2p extension appears exactly once")
    SIGNED_KEY = ("signed_key", "SignedKey is exactly DER `SEQUENCE { OCTET STRING, OCTET "
                                "STRING }`")
    HOST_KEY = ("host_key", "the host key protobuf is canonical (field 1 then 2, minimal "
                            "varints, nothing else), of a known type, with valid data (Ed25519 "
                            "32 bytes, secp256k1 33-byte compressed point, canonical DER SPKI "
                            "for RSA and ECDSA)")
    EXTENSION_SIGNATURE = ("extension_signature", "the host key's signature over "
                                                  "`libp2p-tls-handshake:` + SPKI")
    PEER_ID = ("peer_id", "the PeerId is the one the caller expects (when given)")
    TRANSCRIPT_FIELDS = ("transcript_fields", "(vectors) the fields are consistent: hex, code "
                                              "point, signed content")
    TRANSCRIPT_SCHEME = ("transcript_scheme", "(vectors) a scheme TLS 1.3 allows for "
                                              "CertificateVerify")
    TRANSCRIPT_KEY = ("transcript_key", "(vectors) the scheme fits the certificate key")
    TRANSCRIPT_SIGNATURE = ("transcript_signature", "(vectors) the CertificateVerify signature")

    @property
    def position(self) -> int:
        """1 for the first check."""
        return list(Check).index(self) + 1

    @property
    def is_signature(self) -> bool:
        """Whether this check verifies a signature (one per proof)."""
        return self in (Check.SELF_SIGNATURE, Check.EXTENSION_SIGNATURE,
                        Check.TRANSCRIPT_SIGNATURE)


class ErrorCode(StrEnum):
    """A reason to reject, owned by one check; the members are in check order."""

    check: Check
    description: str

    if not TYPE_CHECKING:  # members are made from tuples; calls look a value up
        def __new__(cls, value: str, check: Check, description: str) -> ErrorCode:
            member = str.__new__(cls, value)
            member._value_ = value
            member.check = check
            member.description = description
            return member

    MALFORMED_CERTIFICATE = (
        "malformed_certificate", Check.STRUCTURE,
        "not exactly one strict-DER X.509 v3 certificate: trailing bytes, BER encodings, "
        "non-DER times, a duplicated extension, a public key that does not decode")
    CHAIN_LENGTH = ("chain_length", Check.CHAIN_LENGTH,
                    "more than one certificate presented (the spec wants exactly one)")
    NOT_YET_VALID = ("not_yet_valid", Check.VALIDITY, "notBefore is after the validation time")
    EXPIRED = ("expired", Check.VALIDITY, "notAfter is before the validation time")
    UNSUPPORTED_SIGNATURE_SCHEME = (
        "unsupported_signature_scheme", Check.SIGNATURE_SCHEME,
        "unknown or weak signature algorithm (SHA-1, RSA under 2048 bits, PSS parameters other "
        "than MGF1 with the same hash and salt = hash length), or key, curve and hash that do "
        "not pair")
    SIGNATURE_ALGORITHM_MISMATCH = (
        "signature_algorithm_mismatch", Check.SIGNATURE_ALGORITHM_MATCH,
        "the tbsCertificate signature field differs from the outer signatureAlgorithm")
    CERTIFICATE_SIGNATURE_INVALID = (
        "certificate_signature_invalid", Check.SELF_SIGNATURE,
        "the self-signature does not verify with the certificate key")
    UNKNOWN_CRITICAL_EXTENSION = (
        "unknown_critical_extension", Check.CRITICAL_EXTENSIONS,
        "a critical extension other than those the verifier understands")
    EXTENSION_MISSING = ("extension_missing", Check.EXTENSION_PRESENT,
                         "no libp2p Public Key Extension (1.3.6.1.4.1.53594.1.1)")
    EXTENSION_DUPLICATE = ("extension_duplicate", Check.EXTENSION_UNIQUE,
                           "the libp2p Public Key Extension appears more than once")
    EXTENSION_MALFORMED = (
        "extension_malformed", Check.SIGNED_KEY,
        "SignedKey is not exactly DER SEQUENCE { OCTET STRING, OCTET STRING }")
    HOST_KEY_MALFORMED = (
        "host_key_malformed", Check.HOST_KEY,
        "the host key protobuf is not canonical, or its key data is not valid for its type")
    HOST_KEY_UNSUPPORTED = ("host_key_unsupported", Check.HOST_KEY,
                            "the host key type is not RSA, Ed25519, Secp256k1 or ECDSA")
    EXTENSION_SIGNATURE_INVALID = (
        "extension_signature_invalid", Check.EXTENSION_SIGNATURE,
        "the host key's signature over 'libp2p-tls-handshake:' + SubjectPublicKeyInfo does not "
        "verify")
    PEER_ID_MISMATCH = ("peer_id_mismatch", Check.PEER_ID,
                        "the PeerId of the host key is not the one the caller expects")
    # TLS 1.3 CertificateVerify (transcript vectors), checked after the certificate:
    TRANSCRIPT_MALFORMED = (
        "transcript_malformed", Check.TRANSCRIPT_FIELDS,
        "a transcript vector field is not what it says: bad hex, a code point that is not the "
        "scheme's, or signed content that is not 64 spaces, context, 0x00, transcript hash")
    TRANSCRIPT_SCHEME_FORBIDDEN = (
        "transcript_scheme_forbidden", Check.TRANSCRIPT_SCHEME,
        "a scheme TLS 1.3 forbids or this verifier does not support for CertificateVerify "
        "(RSASSA-PKCS1-v1_5, SHA-1, rsa_pss_pss_*)")
    TRANSCRIPT_SCHEME_MISMATCH = (
        "transcript_scheme_mismatch", Check.TRANSCRIPT_KEY,
        "the scheme does not fit the certificate key (type or curve)")
    TRANSCRIPT_SIGNATURE_INVALID = (
        "transcript_signature_invalid", Check.TRANSCRIPT_SIGNATURE,
        "the CertificateVerify signature does not verify with the certificate key over the "
        "content built from the stated context and transcript hash")


class Flag(StrEnum):
    """A borderline feature: the verifier reports it, a fixture states it, the note explains it.

    (Two flags describe a CertificateVerify vector: only the generator states those.)
    """

    summary: str
    note: str
    reported: bool

    if not TYPE_CHECKING:  # members are made from tuples; calls look a value up
        def __new__(cls, value: str, summary: str, note: str, reported: bool = True) -> Flag:
            member = str.__new__(cls, value)
            member._value_ = value
            member.summary = summary
            member.note = note
            member.reported = reported
            return member

    P521_CERTIFICATE = (
        "p521-certificate", "the certificate is signed with ecdsa_secp521r1_sha512",
        "The certificate is signed with ecdsa_secp521r1_sha512. The libp2p spec allows any "
        "scheme the peer supports, but widely used implementations cannot verify it "
        "(rust-libp2p's ring backend has no P-521): accepting and rejecting are both conformant.")
    ED448_CERTIFICATE = (
        "ed448-certificate", "the certificate is signed with Ed448",
        "The certificate is signed with Ed448. Allowed by the spec, unsupported by widely used "
        "implementations (rust-libp2p recognises but cannot verify it): either verdict is "
        "conformant.")
    RSA_PSS_KEY = (
        "rsa-pss-key", "the certificate key is an RSASSA-PSS key",
        "The certificate key's SubjectPublicKeyInfo says id-RSASSA-PSS (RFC 4055), not "
        "rsaEncryption: the key may only make RSASSA-PSS signatures, and TLS 1.3 names its "
        "schemes rsa_pss_pss_*. The spec allows any scheme the peer supports; widely used "
        "implementations support only rsaEncryption keys: either verdict is conformant.")
    CRITICAL_LIBP2P_EXTENSION = (
        "critical-libp2p-extension", "the libp2p extension is marked critical",
        "The libp2p extension is marked critical. The spec says it MAY be: an implementation "
        "that understands it must not reject the certificate for that.")
    ISSUER_DIFFERS_FROM_SUBJECT = (
        "issuer-differs-from-subject", "self-signed by key, but issuer and subject differ",
        "Signed by its own key, but issuer and subject differ. The spec asks for a valid "
        "self-signature only; an X.509 library that builds a path may refuse a certificate that "
        "is not self-issued. Either verdict is conformant; the reference verifier accepts.")
    UNIQUE_ID_PRESENT = (
        "unique-id-present", "issuerUniqueID or subjectUniqueID present (senders MUST omit them)",
        "issuerUniqueID or subjectUniqueID is present. Senders MUST omit them, receivers MAY "
        "abort: either verdict is conformant; the reference verifier accepts.")
    EMPTY_NAME = (
        "empty-name", "empty subject or issuer",
        "Empty subject and issuer. RFC 5280 wants a non-empty issuer, strict X.509 parsers "
        "reject it, yet several libp2p implementations generated such certificates (the 2022 "
        "spec vectors are of this kind). The reference verifier accepts.")
    CRITICAL_KNOWN_EXTENSION = (
        "critical-known-extension",
        "a critical basicConstraints, keyUsage, extKeyUsage or subjectAltName",
        "A standard extension (basicConstraints, keyUsage, subjectAltName) is marked critical. "
        "An endpoint that understands it accepts (X.509 libraries do: Go's crypto/x509, "
        "OpenSSL, cryptography); one that does not must reject (tls.md), as rust-libp2p does "
        "for every critical extension but libp2p's. The reference verifier understands "
        "basicConstraints, keyUsage, extKeyUsage and subjectAltName, and accepts.")
    EXTENDED_KEY_USAGE_WITHOUT_SERVER_AUTH = (
        "extended-key-usage-without-server-auth",
        "an extKeyUsage that names neither serverAuth nor anyExtendedKeyUsage",
        "The certificate's extKeyUsage names neither serverAuth nor anyExtendedKeyUsage (for "
        "example clientAuth alone, natural for a dialler's certificate). The libp2p spec says "
        "nothing about key purposes. An X.509 library that checks purposes for a TLS server "
        "refuses it: go-libp2p verifies both sides with Go's crypto/x509 and its default "
        "purpose, serverAuth, so it rejects such a certificate from a listener and from a "
        "dialler alike; verifiers that ignore the extension accept. Either verdict is "
        "conformant; the reference verifier accepts.")
    EC_EXPLICIT_PARAMETERS = (
        "ec-explicit-parameters", "an EC certificate key whose curve is spelled out, not named",
        "The certificate key's SubjectPublicKeyInfo gives the curve's parameters explicitly "
        "(RFC 3279 specifiedCurve) instead of a curve OID. RFC 5480 forbids it in PKIX and "
        "TLS 1.3's ECDSA schemes name their curve; Go's crypto/x509, webpki and cryptography "
        "refuse such keys, OpenSSL reads P-256's parameters as P-256. Either verdict is "
        "conformant; the reference verifier rejects (unsupported_signature_scheme).")
    HIGH_S_HOST_SIGNATURE = (
        "high-s-host-signature", "a secp256k1 host signature whose s is above n/2",
        "A Secp256k1 host signature with s > n/2. ECDSA accepts it; the spec says nothing about "
        "low-S, but libsecp256k1-based verifiers reject it. The reference verifier accepts.")
    WEAK_RSA_KEY = (
        "weak-rsa-key", "an RSA certificate key under 2048 bits",
        "An RSA certificate key under 2048 bits. The spec sets no minimum; rust-libp2p requires "
        "2048..8192 bits, counted in whole bytes of the modulus (RSA-1024 fails, RSA-2047 "
        "passes). The reference verifier rejects (unsupported_signature_scheme).")
    LARGE_RSA_KEY = (
        "large-rsa-key", "an RSA certificate key over 8192 bits",
        "An RSA certificate key over 8192 bits. The spec sets no maximum; rust-libp2p (webpki) "
        "accepts 2048..8192 bits. The reference verifier rejects (unsupported_signature_scheme).")
    ED25519_SMALL_ORDER_KEY = (
        "ed25519-small-order-key", "an Ed25519 host key that is a point of small order",
        "An Ed25519 host key that is one of the eight points of small order (the identity "
        "included): a signature (R = [r]B, S = r) verifies under it for every message by RFC "
        "8032's equation, which does not exclude such keys; libsodium and ed25519-dalek's "
        "strict verification reject them, Go's crypto/ed25519 and OpenSSL accept. Either "
        "verdict is conformant; the reference verifier accepts.")
    RSA_HOST_KEY_SIZE = (
        "rsa-host-key-size", "an RSA host key outside 2048..8192 bits",
        "An RSA host key under 2048 or over 8192 bits. The peer-id spec sets no size; go-libp2p "
        "refuses RSA host keys outside 2048..8192 bits (ErrRsaKeyTooSmall, ErrRsaKeyTooBig). "
        "The reference verifier accepts.")
    PSS_SALT_LENGTH = (
        "pss-salt-length", "RSA-PSS with a salt length other than the hash length",
        "RSA-PSS whose salt length is not the hash length. TLS 1.3's rsa_pss_rsae_* schemes fix "
        "the salt to the digest length and webpki matches the exact parameters; a generic PSS "
        "verifier accepts. The reference verifier rejects (unsupported_signature_scheme).")
    GENERALIZED_TIME_BEFORE_2050 = (
        "generalized-time-before-2050", "a 1950..2049 validity time written as GeneralizedTime",
        "A validity time from 1950 through 2049 written as GeneralizedTime, where RFC 5280 "
        "4.1.2.5 wants UTCTime. nim-libp2p writes every date so; Go's crypto/x509, rustls-webpki "
        "and OpenSSL accept it, and a verifier that rejects it cannot talk to those peers. The "
        "reference verifier accepts. (A year before 1950 has no UTCTime form: GeneralizedTime is "
        "then simply valid, with no flag. Fractional seconds or a missing seconds field are not "
        "DER: malformed_certificate.)")
    # About a CertificateVerify vector, stated by the generator:
    CV_SCHEME_DIFFERS_FROM_CERTIFICATE = (
        "cv-scheme-differs-from-certificate",
        "the CertificateVerify scheme is not the certificate's signature scheme",
        "The CertificateVerify scheme (rsa_pss_rsae_sha256 for an RSA key) differs from the "
        "scheme that signed the certificate. RFC 8446 allows it; some implementations require "
        "the two to be equal, so the vector is acceptable rather than valid.", False)
    CV_SCHEME_EQUALS_CERTIFICATE = (
        "cv-scheme-equals-certificate",
        "the CertificateVerify scheme is the certificate's signature scheme",
        "The CertificateVerify scheme is the certificate's own signature scheme.", False)


class SenderFlag(StrEnum):
    """A property of a certificate an implementation *made* that a conforming receiver may refuse.

    The sender's judgement (:mod:`fixturegen.verify.sender`) reports these beside the verdict on
    each peer-made certificate of the interop stage. Each names the rule a sender breaks (tls.md,
    RFC 5280 or X.690) and why a receiver may refuse for it: every sender flag entitles a
    receiver to refuse the certificate, so a refusal it can explain is the maker's fault, not
    the receiver's.
    """

    summary: str
    rule: str
    refusal: str

    if not TYPE_CHECKING:  # members are made from tuples; calls look a value up
        def __new__(cls, value: str, summary: str, rule: str, refusal: str) -> SenderFlag:
            member = str.__new__(cls, value)
            member._value_ = value
            member.summary = summary
            member.rule = rule
            member.refusal = refusal
            return member

    NOT_DER = (
        "not-der", "the certificate is not a DER X.509 Certificate SEQUENCE",
        "RFC 5280 4.1 (DER, X.690 section 10)",
        "A receiver cannot read it; the judgement stops here.")
    CHAIN_NOT_ONE = (
        "chain-not-one", "more than one certificate sent",
        "tls.md: endpoints MUST NOT send a certificate chain that contains more than one "
        "certificate",
        "The spec forbids it to the sender; a receiver may refuse the chain.")
    VERSION_NOT_V3 = (
        "version-not-v3", "the version is not v3",
        "RFC 5280 4.1.2.1: when extensions are used (libp2p's always is) the version MUST be 3",
        "A v1 or v2 certificate cannot carry the libp2p extension; a receiver may refuse it.")
    SERIAL_NOT_POSITIVE = (
        "serial-not-positive", "the serial number is zero or negative",
        "RFC 5280 4.1.2.2: the serial number MUST be a positive integer",
        "Receivers are only asked to handle such certificates gracefully; strict parsers "
        "(the reference verifier among them) refuse them.")
    SERIAL_TOO_LONG = (
        "serial-too-long", "the serial number is longer than 20 octets",
        "RFC 5280 4.1.2.2: senders MUST NOT use serialNumber values longer than 20 octets",
        "Receivers MUST handle up to 20 octets only; a longer one may be refused.")
    SERIAL_NOT_MINIMAL = (
        "serial-not-minimal", "the serial number INTEGER is not minimally encoded",
        "X.690 8.3.2 (DER): an INTEGER's first nine bits are not all zero or all one",
        "Not DER: a strict receiver refuses it.")
    SIGNATURE_ALGORITHM_MISMATCH = (
        "signature-algorithm-mismatch",
        "tbsCertificate.signature differs from the outer signatureAlgorithm",
        "RFC 5280 4.1.1.2: signatureAlgorithm MUST be the same as the signature field of the "
        "tbsCertificate",
        "A receiver may refuse it (the reference verifier does: signature_algorithm_mismatch).")
    EMPTY_ISSUER = (
        "empty-issuer", "the issuer is an empty Name",
        "RFC 5280 4.1.2.4: the issuer field MUST contain a non-empty distinguished name",
        "Strict X.509 parsers refuse it.")
    EMPTY_SUBJECT = (
        "empty-subject", "the subject is empty without a critical subjectAltName",
        "RFC 5280 4.1.2.6: an empty subject requires a subjectAltName marked critical",
        "Strict X.509 parsers refuse it.")
    FRACTIONAL_SECONDS = (
        "fractional-seconds", "a validity time has fractional seconds",
        "RFC 5280 4.1.2.5.2: GeneralizedTime MUST NOT include fractional seconds",
        "Not the one DER form of a time: a strict receiver refuses it.")
    TIME_NOT_DER = (
        "time-not-der", "a validity time is not YYMMDDHHMMSSZ / YYYYMMDDHHMMSSZ",
        "RFC 5280 4.1.2.5.1 and 4.1.2.5.2: seconds present, Zulu, no other form",
        "Not the one DER form of a time (or not a time at all): a strict receiver refuses it.")
    GENERALIZED_TIME_BEFORE_2050 = (
        "generalized-time-before-2050", "a 1950..2049 validity time written as GeneralizedTime",
        "RFC 5280 4.1.2.5: dates through 2049 MUST be encoded as UTCTime",
        "A receiver may refuse it (the reference verifier accepts, with the flag of the same "
        "name).")
    NOT_VALID_AT_RECEIPT = (
        "not-valid-at-receipt", "the validity window does not hold the time it was judged",
        "tls.md: NotBefore and NotAfter set such that the certificate is valid at the time it "
        "is received",
        "A receiver must refuse a certificate outside its validity window.")
    UNIQUE_ID_PRESENT = (
        "unique-id-present", "issuerUniqueID or subjectUniqueID present",
        "RFC 5280 4.1.2.8: conforming senders MUST NOT generate certificates with unique "
        "identifiers",
        "Either verdict is conformant (the verifier's flag of the same name).")
    CRITICAL_FALSE_ENCODED = (
        "critical-false-encoded", "an extension writes critical FALSE out",
        "X.690 11.5 (DER): a DEFAULT value is omitted; RFC 5280 4.1",
        "Not DER: a strict receiver refuses it (the reference verifier does).")
    EXTENSION_DUPLICATE = (
        "extension-duplicate", "an extension appears more than once",
        "RFC 5280 4.2: a certificate MUST NOT include more than one instance of an extension",
        "A receiver may refuse it.")
    CRITICAL_EXTENSION = (
        "critical-extension", "a critical extension other than libp2p's",
        "tls.md: endpoints MUST abort if the certificate contains critical extensions they do "
        "not understand; a libp2p verifier need understand only libp2p's",
        "A receiver that does not understand it must refuse (rust-libp2p refuses every critical "
        "extension but libp2p's); one that understands it (X.509 libraries, the reference "
        "verifier for basicConstraints, keyUsage, extKeyUsage, subjectAltName) accepts.")


#: The manifest's ``error_codes``: every code, in check order, with what it means.
ERROR_CODES: dict[str, str] = {c.value: c.description for c in ErrorCode}
#: The flags the verifier reports, with a one-line summary.
BORDERLINE_FLAGS: dict[str, str] = {f.value: f.summary for f in Flag if f.reported}
#: The reported flags that leave either verdict conformant: a certificate the reference verifier
#: accepts with one of them is ``acceptable`` (what ``fixturegen import`` concludes). A libp2p
#: extension marked critical is not among them: the spec lets it be, so it must be accepted.
EITHER_VERDICT_FLAGS: frozenset[Flag] = frozenset(
    f for f in Flag if f.reported and f is not Flag.CRITICAL_LIBP2P_EXTENSION)
#: Every flag's note, for the manifest's ``notes``.
NOTES: dict[str, str] = {f.value: f.note for f in Flag}


def check_table() -> str:
    """The table of checks (docs/reference/checks.md), in order, with the codes each gives."""
    rows = ["| # | check | error code |", "|---|---|---|"]
    for check in Check:
        codes = ", ".join(f"`{c}`" for c in ErrorCode if c.check is check)
        rows.append(f"| {check.position} | {check.label} | {codes} |")
    return "\n".join(rows) + "\n"
