"""The generated corpus, checked from the outside (tests/outside.py), not with the generator's
own encoders."""

from __future__ import annotations

import hashlib
import json
import re
import string
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import SignatureAlgorithmOID

from fixturegen.cases import CATALOGUE
from fixturegen.cases.model import template_values
from fixturegen.certs.schemes import SCHEMES
from fixturegen.model.manifest import manifest_schema
from fixturegen.output.writer import generate
from fixturegen.verify.codes import NOTES
from tests import outside

ROOT = Path(__file__).resolve().parents[1]
SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def accepted(fixtures: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in fixtures.values() if f["expected"]["error"] is None]


def test_manifest_validates_against_its_schema(corpus: Path, manifest: dict[str, Any]) -> None:
    schema = json.loads((corpus / "manifest.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(manifest, schema)
    broken = json.loads(json.dumps(manifest))
    broken["fixtures"][0]["expected"]["result"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_shipped_schema_is_the_generated_one(corpus: Path) -> None:
    shipped = json.loads((ROOT / "fixturegen" / "schemas" / "manifest.schema.json").read_text())
    assert shipped == manifest_schema() == json.loads((corpus / "manifest.schema.json").read_text())


def test_every_case_is_in_the_manifest_once(manifest: dict[str, Any]) -> None:
    ids = [f["id"] for f in manifest["fixtures"]]
    assert ids == [c.id for c in CATALOGUE] and len(set(ids)) == len(ids)
    for f in manifest["fixtures"]:
        for flag in f["flags"]:
            assert flag in manifest["notes"] and manifest["notes"][flag] == NOTES[flag]


def test_file_hashes_match(corpus: Path, manifest: dict[str, Any]) -> None:
    for f in manifest["fixtures"]:
        data = (corpus / f["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == f["sha256"], f["id"]
        assert hashlib.sha512(data).hexdigest() == f["sha512"], f["id"]
        assert (corpus / f["certificate_key_path"]).read_bytes().startswith(
            b"-----BEGIN PRIVATE KEY-----")


def test_matrix_is_complete(fixtures: dict[str, dict[str, Any]]) -> None:
    seen = {(f["certificate"]["signature_scheme"], f["host_key"]["type"],
             f["certificate"]["key"]["source"])
            for fid, f in fixtures.items() if fid.startswith("matrix.")}
    assert seen == {(s, h, src) for s in SCHEMES for h in ("RSA", "Ed25519", "Secp256k1", "ECDSA")
                    for src in ("fixed", "throwaway")}
    crit = [f for f in fixtures.values() if f["certificate"]["extension_critical"]]
    assert {f["certificate"]["signature_scheme"] for f in crit} == set(SCHEMES)


#: The signature algorithm each scheme of the fault contexts puts in the certificate.
FAULT_SCHEME_OIDS = {
    "ecdsa_secp256r1_sha256": SignatureAlgorithmOID.ECDSA_WITH_SHA256,
    "ed25519": SignatureAlgorithmOID.ED25519,
    "rsa_pss_rsae_sha256": SignatureAlgorithmOID.RSASSA_PSS,
    "rsa_pkcs1_sha256": SignatureAlgorithmOID.RSA_WITH_SHA256,
}


def test_families_name_their_fixtures_and_fault_contexts_are_what_the_certificate_holds(
        corpus: Path, manifest: dict[str, Any]) -> None:
    """A fixture's family is the template its id fills; the members of a family differ in
    their parameters only; a fault case's context (scheme, criticality, position) is what its
    certificate's DER holds, read with cryptography."""
    members: dict[str, list[dict[str, Any]]] = {}
    for f in manifest["fixtures"]:
        family = f.get("family")
        if family is None:
            assert "{" not in f["id"], f["id"]
            continue
        names = {n for _, n, _, _ in string.Formatter().parse(family["id"]) if n}
        assert set(family["parameters"]) == names, f["id"]
        assert family["id"].format(**family["parameters"]) == f["id"]
        members.setdefault(family["id"], []).append(f)
    alone = [f for f in manifest["fixtures"] if "family" not in f]
    assert len(alone) > 50 and len(members) > 50
    for template, fs in members.items():
        assert len(fs) >= 2, template
        assert len({tuple(sorted(f["family"]["parameters"].items())) for f in fs}) == len(fs)
        assert len({f["rule"] for f in fs}) == 1, template
    faults = {t: fs for t, fs in members.items() if t.startswith("invalid.fault.")}
    assert len(faults) >= 40
    for template, fs in faults.items():
        assert template.endswith(".{host}.{scheme}.{placement}")
        for f in fs:
            context = f["family"]["parameters"]
            cert = x509.load_der_x509_certificate((corpus / f["path"]).read_bytes())
            assert cert.signature_algorithm_oid == FAULT_SCHEME_OIDS[context["scheme"]], f["id"]
            oids = [e.oid.dotted_string for e in cert.extensions]
            index = oids.index(outside.LIBP2P_OID.dotted_string)
            critical = cert.extensions[index].critical
            position = "first" if index == 0 else "last"
            assert context["placement"] == (
                f"{'critical' if critical else 'noncritical'}-{position}"), f["id"]
            assert context["host"] == f["host_key"]["type"].lower(), f["id"]


def test_the_corpus_readme_has_a_row_per_family_and_lists_each_familys_fixtures(
        corpus: Path, manifest: dict[str, Any]) -> None:
    readme = (corpus / "README.md").read_text()
    table, families = readme.split("\n## Families\n", 1)
    rows = re.findall(r"^\| \[?`([^`]+)`", table, flags=re.M)
    expected: list[str] = []
    for f in manifest["fixtures"]:
        key = f["family"]["id"] if "family" in f else f["id"]
        if key not in expected:
            expected.append(key)
    assert rows == expected and len(rows) < len(manifest["fixtures"]) / 2
    sections = re.split(r"^### ", families.split("\n## Flags\n")[0], flags=re.M)[1:]
    listed = {}
    for section in sections:
        template = re.search(r"`([^`]+)`", section)
        assert template is not None
        # a table: its header, its separator, then a row per fixture
        listed[template.group(1)] = len(re.findall(r"^\|", section, flags=re.M)) - 2
    sizes: dict[str, int] = {}
    for f in manifest["fixtures"]:
        if "family" in f:
            sizes[f["family"]["id"]] = sizes.get(f["family"]["id"], 0) + 1
    assert listed == sizes
    # every family's link leads to one anchor, and every anchor is linked
    links = re.findall(r"\]\(#(family-[^)]+)\)", table)
    anchors = re.findall(r'<a id="([^"]+)"></a>', families)
    assert len(anchors) == len(set(anchors)) == len(sizes) and sorted(links) == sorted(anchors)


def test_an_id_template_field_is_a_plain_name() -> None:
    assert template_values("a.{x}.{y}.{x}", {"x": 1, "y": "b"}) == (("x", "1"), ("y", "b"))
    for bad in ("a.{x:03d}", "a.{x!r}", "a.{x.name}", "a.{x[0]}"):
        with pytest.raises(ValueError, match="plain name"):
            template_values(bad, {"x": "v"})


#: Valid cases whose notAfter is at the UTCTime / GeneralizedTime switch: 2049-12-31T23:59:59Z
#: (the last UTCTime instant) and 2050-01-01T00:00:00Z (the first GeneralizedTime one).
UNTIL_SWITCH = {"valid.time.utc-2049": datetime(2049, 12, 31, 23, 59, 59, tzinfo=UTC),
                "boundary.validity.time-switch.generalized-2050": datetime(2050, 1, 1,
                                                                           tzinfo=UTC)}


def test_valid_fixtures_from_the_outside(corpus: Path, fixtures: dict[str, dict[str, Any]]
                                         ) -> None:
    """Strict parse, self-signature with the declared scheme, extension signature over
    prefix + SPKI, PeerId, names, validity window, serial, critical extensions."""
    checked = 0
    for f in accepted(fixtures):
        cert = x509.load_der_x509_certificate((corpus / f["path"]).read_bytes())
        assert cert.version == x509.Version.v3
        outside.verify_self_signature(cert, f["certificate"]["signature_scheme"])
        outside.verify_extension_signature(cert)
        pb, _ = outside.signed_key(cert)
        assert pb.hex() == f["host_key"]["public_key_protobuf_hex"]
        assert outside.peer_id(pb) == f["expected"]["peer_id"], f["id"]
        assert 0 < cert.serial_number < 2 ** 159
        assert int(f["certificate"]["serial"], 16) == cert.serial_number
        if not f["id"].startswith("acceptable."):
            assert cert.issuer == cert.subject and len(cert.subject) > 0
            assert cert.not_valid_before_utc <= datetime(2000, 1, 1, tzinfo=UTC)
            # The UTCTime edge cases end at the switch by design (README: validity times).
            last = UNTIL_SWITCH.get(f["id"], datetime(2999, 12, 31, 23, 59, 59, tzinfo=UTC))
            assert cert.not_valid_after_utc >= last
            critical = [e.oid for e in cert.extensions if e.critical]
            assert critical in ([], [outside.LIBP2P_OID]), f["id"]
            assert bool(critical) == f["certificate"]["extension_critical"]
        checked += 1
    assert checked >= 100


def test_secp256k1_host_signatures_in_the_valid_set_are_low_s(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    found = 0
    for f in fixtures.values():
        if f["host_key"]["type"] != "Secp256k1" or f["expected"]["result"] != "valid":
            continue
        _, sig = outside.signed_key(x509.load_der_x509_certificate(
            (corpus / f["path"]).read_bytes()))
        assert decode_dss_signature(sig)[1] <= SECP256K1_N // 2, f["id"]
        found += 1
    assert found >= 18


def test_pss_fixtures_use_hash_length_salts(corpus: Path, fixtures: dict[str, dict[str, Any]]
                                            ) -> None:
    """RSASSA-PSS-params (RFC 4055) read with pyasn1: saltLength is the digest length, the
    hash the scheme's; and a PSS verifier told that exact salt length accepts the signature."""
    from pyasn1.codec.der import decoder
    from pyasn1_modules import rfc4055, rfc5280

    digests = {"2.16.840.1.101.3.4.2.1": 32, "2.16.840.1.101.3.4.2.2": 48,
               "2.16.840.1.101.3.4.2.3": 64}
    seen: dict[str, int] = {}
    for f in fixtures.values():
        scheme = f["certificate"]["signature_scheme"]
        if scheme.startswith("rsa_pss") and f["expected"]["result"] == "valid":
            der = (corpus / f["path"]).read_bytes()
            parsed, _ = decoder.decode(der, asn1Spec=rfc5280.Certificate())
            params, _ = decoder.decode(parsed["signatureAlgorithm"]["parameters"],
                                       asn1Spec=rfc4055.RSASSA_PSS_params())
            digest = digests[str(params["hashAlgorithm"]["algorithm"])]
            assert int(params["saltLength"]) == digest, f["id"]
            assert scheme.endswith(f"sha{digest * 8}"), f["id"]
            seen[scheme] = digest
            outside.verify_self_signature(x509.load_der_x509_certificate(der), scheme)
    assert set(seen.values()) == {32, 48, 64}  # every PSS hash is covered


def test_invalid_samples_from_the_outside(corpus: Path, fixtures: dict[str, dict[str, Any]]
                                          ) -> None:
    def load(fid: str) -> x509.Certificate:
        return x509.load_der_x509_certificate((corpus / fixtures[fid]["path"]).read_bytes())

    for host in ("ed25519", "secp256k1", "ecdsa", "rsa"):
        cert = load(f"invalid.extension-signature-corrupted.{host}")
        outside.verify_self_signature(cert, "ecdsa_secp256r1_sha256")  # still valid
        with pytest.raises(InvalidSignature):
            outside.verify_extension_signature(cert)
    for scheme in SCHEMES:
        cert = load(f"invalid.self-signature-corrupted.{scheme}")
        outside.verify_extension_signature(cert)  # still valid
        with pytest.raises(InvalidSignature):
            outside.verify_self_signature(cert, scheme)
    for fid in ("invalid.extension-signature.other-host-key",
                "invalid.extension-signature.replayed", "invalid.extension-signature.no-prefix"):
        cert = load(fid)
        outside.verify_self_signature(cert, "ecdsa_secp256r1_sha256")
        with pytest.raises(InvalidSignature):
            outside.verify_extension_signature(cert)
    assert load("invalid.expired").not_valid_after_utc < datetime(2001, 1, 1, tzinfo=UTC)
    assert load("invalid.not-yet-valid").not_valid_before_utc >= datetime(3000, 1, 1, tzinfo=UTC)
    raw = (corpus / fixtures["invalid.trailing-bytes"]["path"]).read_bytes()
    with pytest.raises(ValueError):
        x509.load_der_x509_certificate(raw)
    outside.verify_self_signature(x509.load_der_x509_certificate(raw[:-2]),
                                  "ecdsa_secp256r1_sha256")
    chain = fixtures["invalid.two-certificates"]["chain"]
    assert len(chain) == 2
    for rel in chain:
        c = x509.load_der_x509_certificate((corpus / rel).read_bytes())
        outside.verify_self_signature(c, "ecdsa_secp256r1_sha256")
        outside.verify_extension_signature(c)
    high = load("acceptable.high-s-secp256k1")
    outside.verify_extension_signature(high)  # ECDSA itself accepts high S
    assert decode_dss_signature(outside.signed_key(high)[1])[1] > SECP256K1_N // 2
    short = load("valid.ecdsa-short-integers")
    r, s = decode_dss_signature(short.signature)
    assert min(r, s) < 2 ** 248
    assert isinstance(short.public_key(), ec.EllipticCurvePublicKey)


@pytest.mark.slow
def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path, corpus: Path) -> None:
    again = tmp_path / "again"
    generate(again, workers=1)  # serial here, parallel in the session corpus
    other = tmp_path / "other"
    generate(other, seed="another seed")
    files = sorted(p.relative_to(corpus) for p in corpus.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (corpus / rel).read_bytes() == (again / rel).read_bytes(), rel
    certs = [rel for rel in files if rel.parts[0] == "certs"]
    differ = [rel for rel in certs if (corpus / rel).read_bytes() != (other / rel).read_bytes()]
    assert differ == certs  # every fixture has a seed-derived host key
    assert (corpus / "keys/matrix.ed25519.ed25519.fixed.pem").read_bytes() == (
        other / "keys/matrix.ed25519.ed25519.fixed.pem").read_bytes()


def test_random_mode_is_fresh_and_marked(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", seed=None, only="matrix.ed25519.*")
    b = generate(tmp_path / "b", seed=None, only="matrix.ed25519.*")
    assert a.reproducible is False and a.seed is None
    assert [f.sha256 for f in a.fixtures] != [f.sha256 for f in b.fixtures]
