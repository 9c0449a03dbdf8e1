"""The decoded view of a certificate (``fixturegen/output/asn1text.py``): every element on a
line with the certificate's own offset, named identifiers, opened strings, the libp2p protobuf;
and for a broken certificate, what is wrong and where, never an exception, with bounded work."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from cryptography import x509

from fixturegen.output.asn1text import MAX_DEPTH, MAX_LINES, decoded

VALID = "valid.ed25519-host-key.ecdsa_secp256r1_sha256"


def _der(corpus: Path, fixtures: dict[str, dict[str, Any]], case_id: str) -> bytes:
    return (corpus / fixtures[case_id]["path"]).read_bytes()


def _valid(fixtures: dict[str, dict[str, Any]]) -> str:
    return next(i for i, f in fixtures.items() if f["expected"]["result"] == "valid"
                and f["host_key"]["type"] == "Ed25519" and len(f["chain"]) == 1)


def test_a_valid_certificate_reads_as_its_parts(corpus: Path,
                                                fixtures: dict[str, dict[str, Any]]) -> None:
    case_id = _valid(fixtures)
    der = _der(corpus, fixtures, case_id)
    text = decoded(der)
    cert = x509.load_der_x509_certificate(der)
    assert f"OBJECT IDENTIFIER {cert.signature_algorithm_oid.dotted_string} (" in text
    assert "OBJECT IDENTIFIER 1.3.6.1.4.1.53594.1.1 (libp2p public key extension)" in text
    protobuf = bytes.fromhex(fixtures[case_id]["host_key"]["public_key_protobuf_hex"])
    assert "field 1 (Type) = 1 (Ed25519)" in text
    assert f"field 2 (Data), 32 bytes: {protobuf[4:].hex()}" in text
    # Every offset is where that element starts in the certificate, opened strings included.
    for line in text.splitlines():
        if m := re.match(r"\s*(\d+)  \s*(SEQUENCE|INTEGER|OCTET STRING|OBJECT IDENTIFIER)", line):
            tag = {"SEQUENCE": 0x30, "INTEGER": 0x02, "OCTET STRING": 0x04,
                   "OBJECT IDENTIFIER": 0x06}[m.group(2)]
            assert der[int(m.group(1))] == tag, line
    assert "holding:" in text and "malformed" not in text and "trailing" not in text


def test_a_broken_certificate_says_what_and_where_and_goes_on(
        corpus: Path, fixtures: dict[str, dict[str, Any]]) -> None:
    overrun = next(i for i in fixtures if i.startswith(
        "invalid.fault.signed-key.public-key-overruns."))
    text = decoded(_der(corpus, fixtures, overrun)).splitlines()
    broken = [n for n, line in enumerate(text) if "malformed:" in line]
    assert len(broken) == 1
    assert re.search(r"malformed: a length of \d+ (that overruns|octets that does not fit)",
                     text[broken[0]])
    # The extension's bytes are wrong, not the certificate's: its signature still follows.
    assert any("BIT STRING" in line for line in text[broken[0]:])
    trailing = decoded(_der(corpus, fixtures, "invalid.trailing-bytes"))
    assert trailing.splitlines()[-1] == "2 trailing bytes after the certificate: 0000"
    cut = _der(corpus, fixtures, _valid(fixtures))[:100]
    assert decoded(cut).splitlines()[-1].startswith("malformed: a length of ")


def test_ber_indefinite_lengths_are_read_to_their_end() -> None:
    text = decoded(bytes.fromhex("3080020101a08004010000000000"))
    assert text.splitlines() == ["     0  SEQUENCE, indefinite length", "     2    INTEGER 1",
                                 "     5    [0], indefinite length",
                                 "     7      OCTET STRING, 1 bytes: 00",
                                 "    10      end-of-contents", "    12    end-of-contents"]
    assert decoded(bytes.fromhex("3080020101")).splitlines()[-1].startswith(
        "malformed: an element is cut off")


def test_deep_nesting_and_many_elements_are_bounded() -> None:
    deep = b""
    for _ in range(200):
        deep = b"\x30" + bytes([len(deep)]) + deep if len(deep) < 128 else \
            b"\x30\x82" + len(deep).to_bytes(2, "big") + deep
    text = decoded(deep).splitlines()
    assert len(text) == MAX_DEPTH + 2
    assert text[-1].strip() == "(nested deeper than this view opens)"
    many = b"\x30\x84" + (3 * 100_000).to_bytes(4, "big") + b"\x02\x01\x00" * 100_000
    lines = decoded(many).splitlines()
    assert len(lines) == MAX_LINES + 1 and lines[-1].startswith(f"… (more than {MAX_LINES}")


def test_no_damaged_certificate_makes_it_raise(corpus: Path,
                                               fixtures: dict[str, dict[str, Any]]) -> None:
    der = _der(corpus, fixtures, _valid(fixtures))
    rng = random.Random(7)
    for _ in range(3000):
        damaged = bytearray(der)
        for _ in range(rng.randint(1, 4)):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        cut = bytes(damaged[:rng.randrange(len(damaged) + 1)])
        text = decoded(cut)
        assert text and len(text.splitlines()) <= MAX_LINES + 2
