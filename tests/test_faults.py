"""The fault model (fixturegen/cases/faults.py) and its pairwise covering array (covering.py)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from pyasn1.codec.der import encoder
from pyasn1.type import univ

from fixturegen.cases import CATALOGUE
from fixturegen.cases.covering import pairwise
from fixturegen.cases.faults import (
    CONTEXTS,
    FAULTS,
    REACHING,
    SCHEMES,
    TWIN_FAMILY,
    generated,
    reaches,
)
from fixturegen.cases.model import Case
from fixturegen.keys import HOST_KEY_TYPES
from tests import outside

GENERATED = [c for c in CATALOGUE if c.section == "faults" and c.family != TWIN_FAMILY]
TWINS = [c for c in CATALOGUE if c.family == TWIN_FAMILY]


def _pairs(rows: list[dict[str, Any]]) -> set[tuple[str, Any, str, Any]]:
    return {(a, r[a], b, r[b]) for r in rows for a, b in itertools.combinations(r, 2)}


def test_pairwise_covers_every_allowed_pair_with_allowed_rows_only() -> None:
    params = {"f": [1, 2, 3, 4, 5], "h": ["a", "b", "c"], "s": ["x", "y", "z", "w"],
              "c": [False, True]}

    def allowed(row: dict[str, Any]) -> bool:
        return not (row["f"] == 3 and row["h"] == "a") and not (row["s"] == "w" and row["c"])

    rows = pairwise(params, allowed)
    every = [dict(zip(params, combo, strict=True)) for combo in itertools.product(*params.values())]
    assert all(allowed(r) for r in rows)
    assert _pairs(rows) == _pairs([r for r in every if allowed(r)])
    assert ("f", 3, "h", "a") not in _pairs(rows) and ("s", "w", "c", True) not in _pairs(rows)
    assert len(rows) < len([r for r in every if allowed(r)]) / 4  # far from the product
    assert pairwise(params, allowed) == rows  # deterministic


def test_pairwise_edges() -> None:
    assert pairwise({"a": [1], "b": ["x", "y"]}) == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}]
    assert pairwise({"a": [1, 2]}, lambda r: False) == []
    with pytest.raises(ValueError, match="without values"):
        pairwise({"a": [1], "b": []})


def test_pairwise_grown_slice_by_slice_covers_each_slice_and_keeps_earlier_rows() -> None:
    params = {"f": [1, 2, 3], "h": ["a", "b", "c"], "s": ["x", "y"]}
    rows: list[dict[str, Any]] = []
    slices = []
    for f in params["f"]:
        new = pairwise(params, lambda r, _f=f: r["f"] == _f, prior=rows, focus="f")
        assert all(r["f"] == f for r in new)
        # every pair with this f, and nothing more than the slice needs
        assert {(r["h"]) for r in new} == set(params["h"])
        assert {(r["s"]) for r in new} == set(params["s"])
        assert len(new) == 3
        slices.append(new)
        rows += new
    # the first two slices are what they are without the third
    again: list[dict[str, Any]] = []
    for f in params["f"][:2]:
        again += pairwise(params, lambda r, _f=f: r["f"] == _f, prior=again, focus="f")
    assert again == slices[0] + slices[1]
    # the h-s pairs, not required of any slice, are still spread over all six
    assert {(r["h"], r["s"]) for r in rows} == set(itertools.product("abc", "xy"))
    with pytest.raises(ValueError, match="focus"):
        pairwise(params, focus="nope")


def test_a_slice_given_only_its_own_value_chooses_the_rows_the_whole_product_would() -> None:
    """faults.generated() passes each slice its own fault only (the candidates of one fault,
    not every fault's); the prior rows' other values must weigh the same as before."""
    params = {"f": [1, 2, 3, 4], "h": ["a", "b", "c"], "s": ["x", "y", "z"], "c": [0, 1]}
    whole: list[dict[str, Any]] = []
    alone: list[dict[str, Any]] = []
    for f in params["f"]:
        def allowed(r: dict[str, Any], _f: int = f) -> bool:
            return r["f"] == _f and not (_f == 2 and r["h"] == "a")

        whole += pairwise(params, allowed, prior=whole, focus="f")
        alone += pairwise({**params, "f": [f]}, allowed, prior=alone, focus="f")
    assert alone == whole
    assert len({tuple(r.values()) for r in whole}) == len(whole) >= 4 * 3


def test_a_fault_declared_last_adds_its_cases_and_leaves_the_others_ids() -> None:
    before = FAULTS.pop()
    try:
        without = [c.id for c in generated() if c.family != TWIN_FAMILY]
    finally:
        FAULTS.append(before)
    with_it = [c.id for c in generated() if c.family != TWIN_FAMILY]
    added = [i for i in with_it if i not in without]
    assert set(without) < set(with_it)
    assert added and all(i.startswith(f"invalid.fault.{before.element}.{before.name}.")
                         for i in added)


def test_every_fault_meets_every_host_type_it_applies_to_and_every_scheme() -> None:
    seen: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for c in GENERATED:
        element, name, host, scheme, placement = c.id.split(".")[2:]
        seen[f"{element}.{name}"].add((host, scheme))
        assert placement in ("critical-first", "critical-last", "noncritical-first",
                             "noncritical-last")
    assert set(seen) == {f"{f.element}.{f.name}" for f in FAULTS}
    for f in FAULTS:
        got = seen[f"{f.element}.{f.name}"]
        assert {h for h, _ in got} == {h.lower() for h in f.hosts}, f.name
        assert {s for _, s in got} == set(SCHEMES), f.name
    # every pair of context values meets in some case
    rows = []
    for c in GENERATED:
        host, scheme, placement = c.id.split(".")[4:7]
        critical, position = placement.split("-")
        rows.append({"host": host, "scheme": scheme, "critical": critical == "critical",
                     "position": position})
    values = {"host": {h.lower() for h in HOST_KEY_TYPES}, "scheme": set(SCHEMES),
              "critical": set(CONTEXTS["critical"]), "position": set(CONTEXTS["position"])}
    for a, b in itertools.combinations(values, 2):
        assert {(r[a], r[b]) for r in rows} == set(itertools.product(values[a], values[b])), (a, b)


def test_generated_cases_are_few_per_fault_unique_and_grouped_by_family() -> None:
    assert [c.id for c in generated()] == [c.id for c in GENERATED + TWINS]
    assert len({c.id for c in GENERATED}) == len(GENERATED)
    per_family: dict[str, int] = defaultdict(int)
    for c in GENERATED:
        per_family[c.family] += 1
        assert c.result == "invalid" and c.error is not None and "Context: a " in c.description
    # one case per (host type, scheme) would be 16 a fault: the covering array needs 4, and
    # the reaching rows add at most one per host key type
    by_family = {f.family: f for f in FAULTS}
    assert set(per_family) == set(by_family)
    for family, n in per_family.items():
        assert 4 <= n <= 4 + len(by_family[family].hosts), family
    assert len(GENERATED) < 8 * len(FAULTS)


def _row(c: Case) -> dict[str, Any]:
    host, scheme, placement = (v for _, v in c.parameters)
    critical, position = placement.split("-")
    return {"host": host, "scheme": scheme, "critical": critical == "critical",
            "position": position}


def test_every_fault_reaches_every_host_type_in_a_context_all_implementations_accept() -> None:
    """Beyond its pairwise rows, a fault gets the REACHING row under each host key type where
    none of its rows has the extension first on an ECDSA P-256 certificate, and only
    there: the pairwise rows that already reach keep it from growing."""
    grown = 0
    for f in FAULTS:
        for host in f.hosts:
            mine = [c for c in GENERATED if c.family == f.family
                    and dict(c.parameters)["host"] == host.lower()]
            reaching = [c for c in mine if reaches(_row(c))]
            assert reaching, (f.family, host)
            base = [c for c in mine if _row(c) == {**REACHING, "host": host.lower()}]
            if base and len(reaching) == 1:
                grown += 1
            # a grown row is there only because the other rows of that host do not reach
            assert not base or len(reaching) == 1 or f.hosts == ("RSA",), (f.family, host)
    assert grown > len(FAULTS)  # most (fault, host) pairs needed it


def test_every_context_of_a_fault_case_has_one_valid_twin_and_no_other() -> None:
    contexts = {c.parameters for c in GENERATED}
    assert [c.parameters for c in TWINS] == sorted(
        contexts, key=lambda p: (HOST_KEY_TYPES.index(
            next(h for h in HOST_KEY_TYPES if h.lower() == p[0][1])), SCHEMES.index(p[1][1]),
            p[2][1].startswith("critical"), p[2][1].endswith("last")))
    for t in TWINS:
        assert t.id == TWIN_FAMILY.format(**dict(t.parameters))
        assert (t.result, t.error, t.section) == ("valid", None, "faults")
        assert bool(t.flags) == (".critical-" in t.id)


def test_each_twin_is_valid_in_its_context_seen_from_the_outside(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    assert len(TWINS) >= 16
    for t in TWINS:
        f = fixtures[t.id]
        cert = x509.load_der_x509_certificate((corpus / f["path"]).read_bytes())
        outside.verify_self_signature(cert, f["certificate"]["signature_scheme"])
        ext = cert.extensions.get_extension_for_oid(outside.LIBP2P_OID)
        host, scheme, placement = (v for _, v in t.parameters)
        assert ext.critical == placement.startswith("critical") == (
            f["certificate"]["extension_critical"])
        assert len(cert.extensions) == (1 if placement.endswith("-first") else 2)
        assert cert.extensions[-1].oid == outside.LIBP2P_OID
        assert f["certificate"]["signature_scheme"] == scheme
        assert f["host_key"]["type"].lower() == host
        assert _visible_fault(cert, bytes.fromhex(f["host_key"]["public_key_protobuf_hex"])
                              ) is None, t.id
        assert f["expected"]["result"] == "valid" and f["expected"]["error"] is None


def _visible_fault(cert: x509.Certificate, protobuf: bytes) -> str | None:
    """Why the extension is not a valid DER SignedKey of the stated host key, seen from the
    outside (pyasn1, a protobuf reader, cryptography), or None when it looks valid."""
    value = cert.extensions.get_extension_for_oid(outside.LIBP2P_OID).value.value  # type: ignore[attr-defined]
    try:
        pb, sig = outside.signed_key(cert)
    except Exception as exc:
        return f"SignedKey does not decode: {type(exc).__name__}"
    again = outside.SignedKey()
    again["publicKey"], again["signature"] = univ.OctetString(pb), univ.OctetString(sig)
    if encoder.encode(again) != value:
        return "SignedKey is not DER"
    if pb != protobuf:
        return "publicKey is not the canonical protobuf of the host key"
    try:
        outside.verify_extension_signature(cert)
    except Exception as exc:
        return f"the signature does not verify: {type(exc).__name__}"
    return None


def test_each_generated_case_has_its_one_fault_seen_from_the_outside(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    assert len(GENERATED) > 100
    for c in GENERATED:
        f = fixtures[c.id]
        cert = x509.load_der_x509_certificate((corpus / f["path"]).read_bytes())
        # the certificate around the fault is valid: its own key signed it, as stated
        outside.verify_self_signature(cert, f["certificate"]["signature_scheme"])
        ext = cert.extensions.get_extension_for_oid(outside.LIBP2P_OID)
        assert ext.critical == (".critical-" in c.id) == (
            f["certificate"]["extension_critical"])
        assert (cert.extensions[0].oid == outside.LIBP2P_OID) == c.id.endswith("-first"), c.id
        assert _visible_fault(cert, bytes.fromhex(f["host_key"]["public_key_protobuf_hex"])), c.id
        assert f["host_key"]["type"].lower() == c.id.split(".")[4]
        assert f["expected"] == {"result": "invalid", "error": c.error, "peer_id": None}


def test_certificate_keys_outside_the_signature_families_from_the_outside(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    """DSA, X25519, X448 and RSASSA-PSS certificate keys, as cryptography reads them."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import dsa, padding, rsa, x448, x25519

    def load(fid: str) -> x509.Certificate:
        return x509.load_der_x509_certificate((corpus / fixtures[fid]["path"]).read_bytes())

    good, bad = load("invalid.certificate-key.dsa.self-signed"), load(
        "invalid.certificate-key.dsa.self-signature-corrupted")
    for cert in (good, bad):
        assert isinstance(cert.public_key(), dsa.DSAPublicKey)
        assert cert.signature_algorithm_oid.dotted_string == "2.16.840.1.101.3.4.3.2"
        outside.verify_extension_signature(cert)  # the extension is valid in both
    key = good.public_key()
    assert isinstance(key, dsa.DSAPublicKey)
    key.verify(good.signature, good.tbs_certificate_bytes, hashes.SHA256())
    with pytest.raises(InvalidSignature):
        key.verify(bad.signature, bad.tbs_certificate_bytes, hashes.SHA256())
    assert isinstance(load("invalid.certificate-key.x25519").public_key(), x25519.X25519PublicKey)
    assert isinstance(load("invalid.certificate-key.x448").public_key(), x448.X448PublicKey)
    pss = load("acceptable.rsa-pss-key")
    assert pss.public_key_algorithm_oid.dotted_string == "1.2.840.113549.1.1.10"
    rsa_key = pss.public_key()
    assert isinstance(rsa_key, rsa.RSAPublicKey)
    rsa_key.verify(pss.signature, pss.tbs_certificate_bytes,
                   padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
    written = outside.spki(pss)  # as written: under id-RSASSA-PSS, not rsaEncryption
    assert bytes.fromhex("300b06092a864886f70d01010a") in written
    assert written != rsa_key.public_bytes(serialization.Encoding.DER,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    outside.verify_extension_signature(pss)  # the host key signed that SubjectPublicKeyInfo
