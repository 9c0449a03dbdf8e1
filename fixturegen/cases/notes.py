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
}
