"""What a peer sends, read off the wire by this project's own code (not by the TLS stack that
sent it): a TLS ClientHello's versions and ALPN list, from a TCP record or from QUIC v1 Initial
packets (decrypted with the keys RFC 9001 section 5.2 derives from the connection id)."""

from __future__ import annotations

import hmac
import struct
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

SUPPORTED_VERSIONS = 43
ALPN = 16
#: RFC 9001 section 5.2.
INITIAL_SALT = bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a")


@dataclass(frozen=True)
class ClientHello:
    legacy_version: int
    versions: tuple[int, ...]  # supported_versions; () when the extension is absent
    alpn: tuple[str, ...] | None  # None when the ALPN extension is absent


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise ValueError("truncated")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def number(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big")

    def vector(self, length_bytes: int) -> bytes:
        return self.take(self.number(length_bytes))

    def varint(self) -> int:
        first = self.take(1)[0]
        rest = self.take((1 << (first >> 6)) - 1)
        return int.from_bytes(bytes([first & 0x3F]) + rest, "big")


def parse_client_hello(message: bytes) -> ClientHello:
    """``message``: a handshake message (type, 3-byte length, body), a ClientHello."""
    r = _Reader(message)
    if r.number(1) != 1:
        raise ValueError("not a ClientHello")
    body = _Reader(r.vector(3))
    legacy = body.number(2)
    body.take(32)
    body.vector(1)  # session id
    body.vector(2)  # cipher suites
    body.vector(1)  # compression methods
    extensions = _Reader(body.vector(2))
    versions: tuple[int, ...] = ()
    alpn: tuple[str, ...] | None = None
    while extensions.at < len(extensions.data):
        kind, data = extensions.number(2), _Reader(extensions.vector(2))
        if kind == SUPPORTED_VERSIONS:
            listed = _Reader(data.vector(1))
            versions = tuple(listed.number(2) for _ in range(len(listed.data) // 2))
        elif kind == ALPN:
            names = _Reader(data.vector(2))
            found: list[str] = []
            while names.at < len(names.data):
                found.append(names.vector(1).decode())
            alpn = tuple(found)
    return ClientHello(legacy, versions, alpn)


def client_hello_from_records(stream: bytes) -> ClientHello | None:
    """The ClientHello in the TLS records ``stream`` starts with, or None while incomplete."""
    r = _Reader(stream)
    message = b""
    try:
        while True:
            kind, _, length = r.number(1), r.number(2), r.number(2)
            if kind != 22:
                raise ValueError(f"record of type {kind}, not a handshake")
            message += r.take(length)
            if len(message) >= 4 and len(message) >= 4 + int.from_bytes(message[1:4], "big"):
                return parse_client_hello(message)
    except ValueError as exc:
        if str(exc) == "truncated":
            return None
        raise


def _expand_label(secret: bytes, label: str, length: int) -> bytes:
    full = b"tls13 " + label.encode()
    info = struct.pack(">HB", length, len(full)) + full + b"\x00"
    return HKDFExpand(hashes.SHA256(), length, info).derive(secret)


def _extract(salt: bytes, key: bytes) -> bytes:
    return hmac.new(salt, key, "sha256").digest()


def initial_crypto(datagram: bytes) -> list[tuple[int, bytes]]:
    """The CRYPTO frames (offset, data) of the client's QUIC v1 Initial packets in a datagram
    (coalesced packets of other types are skipped)."""
    frames: list[tuple[int, bytes]] = []
    rest = datagram
    while rest and rest[0] & 0x80:
        r = _Reader(rest)
        first = r.number(1)
        version = r.number(4)
        dcid = r.vector(1)
        r.vector(1)  # scid
        kind = (first >> 4) & 0x3
        if kind == 0:
            r.take(r.varint())  # token
        length = r.varint()
        pn_offset = r.at
        packet, rest = rest[:pn_offset + length], rest[pn_offset + length:]
        if version != 1 or kind != 0:
            continue
        secret = _expand_label(_extract(INITIAL_SALT, dcid), "client in", 32)
        key, iv = _expand_label(secret, "quic key", 16), _expand_label(secret, "quic iv", 12)
        hp = _expand_label(secret, "quic hp", 16)
        sample = packet[pn_offset + 4:pn_offset + 20]
        mask = Cipher(algorithms.AES(hp), modes.ECB()).encryptor().update(sample)
        first ^= mask[0] & 0x0F
        pn_length = (first & 0x03) + 1
        pn_bytes = bytes(b ^ m for b, m in zip(packet[pn_offset:pn_offset + pn_length],
                                               mask[1:1 + pn_length], strict=True))
        header = bytes([first]) + packet[1:pn_offset] + pn_bytes
        counter = int.from_bytes(pn_bytes, "big").to_bytes(12, "big")
        nonce = bytes(a ^ b for a, b in zip(iv, counter, strict=True))
        plain = _Reader(AESGCM(key).decrypt(nonce, packet[pn_offset + pn_length:], header))
        while plain.at < len(plain.data):
            frame = plain.varint()
            if frame in (0x00, 0x01):  # PADDING, PING
                continue
            if frame != 0x06:
                break  # an ACK or anything else: a client's first Initials carry none
            offset = plain.varint()
            frames.append((offset, plain.take(plain.varint())))
    return frames


def client_hello_from_crypto(frames: list[tuple[int, bytes]]) -> ClientHello | None:
    """The ClientHello the CRYPTO frames spell from offset 0, or None while a gap remains."""
    stream = b""
    for offset, data in sorted(frames):
        if offset > len(stream):
            return None
        stream += data[len(stream) - offset:]
        if len(stream) >= 4 and len(stream) >= 4 + int.from_bytes(stream[1:4], "big"):
            return parse_client_hello(stream[:4 + int.from_bytes(stream[1:4], "big")])
    return None
