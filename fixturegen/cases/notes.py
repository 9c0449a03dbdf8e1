"""Every flag a fixture can carry, explained once (as Project Wycheproof's ``notes``)."""

NOTES: dict[str, str] = {
    "p521-certificate": (
        "The certificate is signed with ecdsa_secp521r1_sha512. The libp2p spec allows any scheme "
        "the peer supports, but widely used implementations cannot verify it (rust-libp2p's ring "
        "backend has no P-521): accepting and rejecting are both conformant."
    ),
    "ed448-certificate": (
        "The certificate is signed with Ed448. Allowed by the spec, unsupported by widely used "
        "implementations (rust-libp2p recognises but cannot verify it): either verdict is "
        "conformant."
    ),
    "critical-libp2p-extension": (
        "The libp2p extension is marked critical. The spec says it MAY be: an implementation "
        "that understands it must not reject the certificate for that."
    ),
    "issuer-differs-from-subject": (
        "Signed by its own key, but issuer and subject differ. The spec asks for a valid "
        "self-signature only; an X.509 library that builds a path may refuse a certificate that "
        "is not self-issued. Either verdict is conformant; the reference verifier accepts."
    ),
    "unique-id-present": (
        "issuerUniqueID or subjectUniqueID is present. Senders MUST omit them, receivers MAY "
        "abort: either verdict is conformant; the reference verifier accepts."
    ),
    "empty-name": (
        "Empty subject and issuer. RFC 5280 wants a non-empty issuer, strict X.509 parsers "
        "reject it, yet several libp2p implementations generated such certificates (the 2022 "
        "spec vectors are of this kind). The reference verifier accepts."
    ),
    "critical-known-extension": (
        "A standard extension (basicConstraints, keyUsage) is marked critical. An endpoint that "
        "understands it accepts; one that does not must reject (tls.md). The reference verifier "
        "understands basicConstraints, keyUsage and extKeyUsage, and accepts."
    ),
    "high-s-host-signature": (
        "A Secp256k1 host signature with s > n/2. ECDSA accepts it; the spec says nothing about "
        "low-S, but libsecp256k1-based verifiers reject it. The reference verifier accepts."
    ),
    "weak-rsa-key": (
        "An RSA certificate key under 2048 bits. The spec sets no minimum; rust-libp2p requires "
        "2048..8192 bits. The reference verifier rejects (unsupported_signature_scheme)."
    ),
    "generalized-time-before-2050": (
        "A validity time from 1950 through 2049 written as GeneralizedTime, where RFC 5280 "
        "4.1.2.5 wants UTCTime. nim-libp2p writes every date so; Go's crypto/x509, rustls-webpki "
        "and OpenSSL accept it, and a verifier that rejects it cannot talk to those peers. The "
        "reference verifier accepts. (A year before 1950 has no UTCTime form: GeneralizedTime is "
        "then simply valid, with no flag. Fractional seconds or a missing seconds field are not "
        "DER: malformed_certificate.)"
    ),
    "pss-salt-length": (
        "RSA-PSS whose salt length is not the hash length. TLS 1.3's rsa_pss_rsae_* schemes fix "
        "the salt to the digest length and webpki matches the exact parameters; a generic PSS "
        "verifier accepts. The reference verifier rejects (unsupported_signature_scheme)."
    ),
}
