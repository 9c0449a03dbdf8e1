"""The stand-in implementation's certificate generator (answers ``generate`` requests): a fresh
host key of the type asked (ed25519, secp256k1, ecdsa; rsa it cannot make), a fresh P-256
certificate key, the libp2p extension signed by the host key, a self-signed certificate."""

import datetime
import hashlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import NameOID

PREFIX = b"libp2p-tls-handshake:"
EXTENSION = x509.ObjectIdentifier("1.3.6.1.4.1.53594.1.1")
ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
PUBLIC = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _der(tag, body):
    n = len(body)
    size = bytes([n]) if n < 0x80 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes(
        (n.bit_length() + 7) // 8, "big")
    return bytes([tag]) + size + body


def _host_key(kind):
    """(private key, protobuf key type, protobuf key data, sign(message))."""
    if kind == "ed25519":
        key = ed25519.Ed25519PrivateKey.generate()
        raw = key.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
        return 1, raw, key.sign
    if kind in ("secp256k1", "ecdsa"):
        key = ec.generate_private_key(ec.SECP256K1() if kind == "secp256k1" else ec.SECP256R1())
        if kind == "secp256k1":
            data = key.public_key().public_bytes(serialization.Encoding.X962,
                                                 serialization.PublicFormat.CompressedPoint)
        else:
            data = key.public_key().public_bytes(*PUBLIC)
        return (2 if kind == "secp256k1" else 3), data, (
            lambda message: key.sign(message, ec.ECDSA(hashes.SHA256())))
    raise ValueError(f"cannot make a {kind} host key")


def _peer_id(protobuf):
    digest = b"\x00" + bytes([len(protobuf)]) + protobuf if len(protobuf) <= 42 else (
        b"\x12\x20" + hashlib.sha256(protobuf).digest())
    number = int.from_bytes(digest, "big")
    text = ""
    while number:
        number, digit = divmod(number, 58)
        text = ALPHABET[digit] + text
    return "1" * (len(digest) - len(digest.lstrip(b"\x00"))) + text


def make(kind):
    """(certificate DER, certificate key PEM, PeerId) for a host key of type ``kind``."""
    key_type, data, sign = _host_key(kind)
    protobuf = b"\x08" + bytes([key_type]) + b"\x12" + bytes([len(data)]) + data
    cert_key = ec.generate_private_key(ec.SECP256R1())
    spki = cert_key.public_key().public_bytes(*PUBLIC)
    signature = sign(PREFIX + spki)
    signed_key = _der(0x30, _der(0x04, protobuf) + _der(0x04, signature))
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.SERIAL_NUMBER, "1")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(cert_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.UnrecognizedExtension(EXTENSION, signed_key), critical=True)
            .sign(cert_key, hashes.SHA256()))
    pem = cert_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption()).decode()
    return cert.public_bytes(serialization.Encoding.DER), pem, _peer_id(protobuf)
