"""The valid matrix: every certificate signature scheme x every host key type x fixed and
throwaway certificate keys; the critical-extension variants; larger RSA moduli."""

from __future__ import annotations

from collections.abc import Callable

from fixturegen.cases.context import HOST_KINDS, BuildContext
from fixturegen.cases.model import Built, Case, Result, register
from fixturegen.certs.schemes import SCHEMES
from fixturegen.keys import Source

HOST_LABELS = {"Ed25519": "ed25519", "Secp256k1": "secp256k1", "ECDSA": "ecdsa-p256",
               "RSA": "rsa-2048"}
RULE = "tls.md: Peer Authentication; the libp2p Public Key Extension"


def _matrix_case(scheme: str, host_type: str, source: Source, critical: bool = False,
                 cert_kind: str | None = None) -> Callable[[BuildContext], Built]:
    def build(ctx: BuildContext) -> Built:
        d = ctx.draft(scheme, cert_source=source, cert_kind=cert_kind,
                      host=ctx.host(host_type), critical=critical)
        return ctx.built(d, scheme, critical=critical)

    return build


def _register_matrix() -> None:
    for scheme in SCHEMES.values():
        flag = scheme.borderline_flag
        result: Result = "acceptable" if flag else "valid"
        flags = (flag,) if flag else ()
        for host_type in HOST_KINDS:
            for source in ("fixed", "throwaway"):
                register(Case(
                    id=f"matrix.{scheme.name}.{HOST_LABELS[host_type]}.{source}",
                    description=(
                        f"A valid certificate signed with {scheme.name} by a {source} "
                        f"{scheme.key_kind} certificate key, carrying a non-critical libp2p "
                        f"extension for a throwaway {host_type} host key."
                    ),
                    result=result, flags=flags, rule=RULE,
                    build=_matrix_case(scheme.name, host_type, source),
                ))
        register(Case(
            id=f"critical.{scheme.name}",
            description=(
                f"As matrix.{scheme.name}.ed25519.fixed, with the libp2p extension marked "
                "critical, which the spec allows (an endpoint that understands it must accept)."
            ),
            result=result, flags=(*flags, "critical-libp2p-extension"), rule=RULE,
            build=_matrix_case(scheme.name, "Ed25519", "fixed", critical=True),
        ))
    for bits in (3072, 4096):
        for rsa_scheme in ("rsa_pkcs1_sha256", "rsa_pss_rsae_sha384"):
            register(Case(
                id=f"rsa-size.{rsa_scheme}.rsa-{bits}",
                description=(
                    f"A valid certificate signed with {rsa_scheme} by the fixed RSA-{bits} key "
                    "(rust-libp2p accepts moduli of 2048 to 8192 bits)."
                ),
                result="valid", rule=RULE,
                build=_matrix_case(rsa_scheme, "Ed25519", "fixed", cert_kind=f"rsa-{bits}"),
            ))
    register(Case(
        id="host-ecdsa-p384",
        description=(
            "A valid P-256 certificate whose host key is ECDSA on P-384: the host signature is "
            "still over SHA-256 (peer-ids.md: ECDSA signs SHA-256 of the message on every curve)."
        ),
        result="valid", rule="peer-ids.md: ECDSA",
        build=lambda ctx: ctx.built(
            ctx.draft(host=ctx.host("ECDSA", kind="p384")), "ecdsa_secp256r1_sha256"
        ),
    ))


_register_matrix()
