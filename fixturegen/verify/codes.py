"""The reference verifier's error codes, in the order it checks them.

The order is the order of the checks: first that the input is one strict-DER certificate,
then the X.509 rules that need no libp2p knowledge (times, algorithms, the self-signature,
critical extensions), then the libp2p extension from the outside in (present, unique,
well-formed, a well-formed host key, its signature), and last the caller's expectation. Cheap
structural checks come before signature checks, and the certificate is proven self-consistent
before its claim of an identity is examined. The first failing check is the verdict.
"""

ERROR_CODES: dict[str, str] = {
    "malformed_certificate": (
        "not exactly one strict-DER X.509 v3 certificate: trailing bytes, BER encodings, "
        "non-DER times, a duplicated extension, a public key that does not decode"
    ),
    "chain_length": "more than one certificate presented (the spec wants exactly one)",
    "not_yet_valid": "notBefore is after the validation time",
    "expired": "notAfter is before the validation time",
    "unsupported_signature_scheme": (
        "unknown or weak signature algorithm (SHA-1, RSA under 2048 bits, PSS parameters other "
        "than MGF1 with the same hash and salt = hash length), or key, curve and hash that do "
        "not pair"
    ),
    "signature_algorithm_mismatch": (
        "the tbsCertificate signature field differs from the outer signatureAlgorithm"
    ),
    "certificate_signature_invalid": "the self-signature does not verify with the certificate key",
    "unknown_critical_extension": "a critical extension other than those the verifier understands",
    "extension_missing": "no libp2p Public Key Extension (1.3.6.1.4.1.53594.1.1)",
    "extension_duplicate": "the libp2p Public Key Extension appears more than once",
    "extension_malformed": "SignedKey is not exactly DER SEQUENCE { OCTET STRING, OCTET STRING }",
    "host_key_malformed": (
        "the host key protobuf is not canonical, or its key data is not valid for its type"
    ),
    "host_key_unsupported": "the host key type is not RSA, Ed25519, Secp256k1 or ECDSA",
    "extension_signature_invalid": (
        "the host key's signature over 'libp2p-tls-handshake:' + SubjectPublicKeyInfo does not "
        "verify"
    ),
    "peer_id_mismatch": "the PeerId of the host key is not the one the caller expects",
    # TLS 1.3 CertificateVerify (transcript vectors), checked after the certificate:
    "transcript_malformed": (
        "a transcript vector field is not what it says: bad hex, a code point that is not the "
        "scheme's, or signed content that is not 64 spaces, context, 0x00, transcript hash"
    ),
    "transcript_scheme_forbidden": (
        "a scheme TLS 1.3 forbids or this verifier does not support for CertificateVerify "
        "(RSASSA-PKCS1-v1_5, SHA-1, rsa_pss_pss_*)"
    ),
    "transcript_scheme_mismatch": "the scheme does not fit the certificate key (type or curve)",
    "transcript_signature_invalid": (
        "the CertificateVerify signature does not verify with the certificate key over the "
        "content built from the stated context and transcript hash"
    ),
}

#: Flags the verifier reports for borderline (``acceptable``) features.
BORDERLINE_FLAGS: dict[str, str] = {
    "p521-certificate": "the certificate is signed with ecdsa_secp521r1_sha512",
    "ed448-certificate": "the certificate is signed with Ed448",
    "critical-libp2p-extension": "the libp2p extension is marked critical",
    "issuer-differs-from-subject": "self-signed by key, but issuer and subject differ",
    "unique-id-present": "issuerUniqueID or subjectUniqueID present (senders MUST omit them)",
    "empty-name": "empty subject or issuer",
    "critical-known-extension": "a critical basicConstraints, keyUsage or extKeyUsage",
    "high-s-host-signature": "a secp256k1 host signature whose s is above n/2",
    "weak-rsa-key": "an RSA certificate key under 2048 bits",
    "pss-salt-length": "RSA-PSS with a salt length other than the hash length",
    "generalized-time-before-2050": "a 1950..2049 validity time written as GeneralizedTime",
}
