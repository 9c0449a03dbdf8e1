"""What a certificate costs to check: the largest host key a receiver could be sent, lengths
that claim far more data than there is, and the deepest nesting the input bounds allow.

peer-ids.md sets no RSA key size, and a receiver that verifies whatever arrives spends time in
proportion to the square of the modulus: go-libp2p up to v0.27.7 did (CVE-2023-39533), and
refuses RSA host keys over 8192 bits since. The case below carries the largest RSA host key
(24 KiB) the input bounds allow (the certificate stays under the 64 KiB a certificate may have
here, the TLS Certificate message under rustls's 64 KiB), with a host signature that verifies:
a verifier that computes with it accepts after paying for it, one that bounds the size refuses
at once. Either verdict is conformant; what the harness measures is the cost (results.json's
``cpu_seconds``, the summary's "What a check costs").

No one can make an RSA key of this size from two primes in reasonable time, and RSA verification
does not need two: the modulus is the product of 768 primes of 256 bits (multi-prime RSA, RFC
8017 3.1), derived from the seed, and the signature is made through the Chinese remainder
theorem. To a verifier the public key is an ordinary (n, e = 65537).

A parser that trusts a length before it has the bytes (to allocate, or to skip ahead) is sent a
length of 4 GiB - 1 in the certificate's outer SEQUENCE and in the libp2p extension's
SignedKey, each followed by the real content: both are malformed, and a receiver must say so at
once. A parser that opens every element it meets, recursively, is sent an unknown non-critical
extension holding 3,000 nested SEQUENCEs (12 KB): its value is opaque to a libp2p verifier,
which must ignore it, so the certificate is valid. (It stays small enough for a QUIC handshake:
quic-go holds the handshake's crypto stream to 16 KiB and refuses a larger certificate.)
"""

from __future__ import annotations

import hashlib

from fixturegen.cases.context import BuildContext, Built, PresentedHost
from fixturegen.cases.model import case
from fixturegen.cases.mutate import with_libp2p_value
from fixturegen.certs import der
from fixturegen.certs.extension import extension, handshake_message, signed_key
from fixturegen.identity.protobuf import encode_public_key
from fixturegen.verify.codes import ErrorCode, Flag

RULE = ("peer-ids.md sets no RSA key size; go-libp2p refuses RSA host keys over 8192 bits since "
        "v0.27.8 (CVE-2023-39533: the cost of verifying larger ones)")
PRIME_BITS = 256
PRIMES = 768
E = 65537
RSA_ENCRYPTION = "1.2.840.113549.1.1.1"
#: DigestInfo for SHA-256 (RFC 8017 9.2, note 1), before the hash.
SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")
_SMALL_PRIMES = [p for p in range(3, 2000) if all(p % q for q in range(2, int(p**0.5) + 1))]
_WITNESSES = (2, 3, 5, 7)


def _probable_prime(n: int) -> bool:
    """Miller-Rabin with 4 fixed bases, for a candidate the sieve left (the signature is
    checked afterwards, so a composite that slipped through would fail the build, not the
    corpus)."""
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in _WITNESSES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(ctx: BuildContext, index: int) -> int:
    """The index-th prime: the first probable prime from a derived odd start with its top two
    bits set, with p - 1 prime to e (found through a sieve of the next 4096 odd numbers)."""
    start = int.from_bytes(ctx.derived(f"rsa-prime-{index}", PRIME_BITS // 8), "big")
    start |= (3 << (PRIME_BITS - 2)) | 1
    while True:
        sieve = bytearray(b"\x01") * 4096  # sieve[j]: start + 2j may be prime
        for q in _SMALL_PRIMES:
            first = (-start) * ((q + 1) // 2) % q  # start + 2 * first = 0 (mod q)
            sieve[first::q] = bytes(len(range(first, len(sieve), q)))
        for j in (j for j, alive in enumerate(sieve) if alive):
            candidate = start + 2 * j
            if (candidate - 1) % E and _probable_prime(candidate):
                return candidate
        start += 2 * len(sieve)


def multi_prime_rsa(ctx: BuildContext) -> list[int]:
    """The distinct primes of the modulus."""
    primes: list[int] = []
    index = 0
    while len(primes) < PRIMES:
        p = _prime(ctx, index)
        index += 1
        if p not in primes:
            primes.append(p)
    return primes


def sign_pkcs1_sha256(primes: list[int], message: bytes) -> tuple[int, bytes]:
    """(n, the RSASSA-PKCS1-v1_5 SHA-256 signature of ``message``), made prime by prime and
    joined by Garner's algorithm; checked with the public key before it is returned."""
    n = 1
    for p in primes:
        n *= p
    k = (n.bit_length() + 7) // 8
    digest = SHA256_DIGEST_INFO + hashlib.sha256(message).digest()
    encoded = b"\x00\x01" + b"\xff" * (k - len(digest) - 3) + b"\x00" + digest
    m = int.from_bytes(encoded, "big")
    s, modulus = 0, 1
    for p in primes:
        part = pow(m % p, pow(E, -1, p - 1), p)
        # s = s + modulus * t with s + modulus * t = part (mod p)
        t = (part - s % p) * pow(modulus % p, -1, p) % p
        s, modulus = s + modulus * t, modulus * p
    # s^e = m (mod n) if and only if it holds modulo each prime (n is their product).
    if any(pow(s % p, E, p) != m % p for p in primes):
        raise ValueError("the multi-prime signature does not verify")  # pragma: no cover
    return n, s.to_bytes(k, "big")


def rsa_spki(n: int, e: int) -> bytes:
    key = der.sequence(der.integer(n), der.integer(e))
    return der.sequence(der.sequence(der.oid(RSA_ENCRYPTION), der.null()), der.bit_string(key))


@case("acceptable.cost.rsa-host-key-24kib", "acceptable", ErrorCode.HOST_KEY_UNSUPPORTED,
      flags=(Flag.RSA_HOST_KEY_SIZE,), importance="high", rule=RULE)
def rsa_host_key_24kib(ctx: BuildContext) -> Built:
    """An RSA host key of about 196,000 bits (24 KiB: the product of 768 primes of 256 bits,
    e = 65537)
    whose PKCS#1 v1.5 SHA-256 signature over this certificate's key verifies; the certificate
    is otherwise valid (P-256, ecdsa_secp256r1_sha256). A verifier without a size bound
    accepts it after about 600 times the work of an RSA-8192 check (go-libp2p up to v0.27.7:
    CVE-2023-39533); one with a bound refuses it at once (go-libp2p since v0.27.8 and webpki:
    8192 bits; OpenSSL and the reference verifier: 16384 bits, host_key_unsupported)."""
    d = ctx.draft()
    n, signature = sign_pkcs1_sha256(multi_prime_rsa(ctx), handshake_message(d.cert_key.spki))
    protobuf = encode_public_key(0, rsa_spki(n, E))
    return ctx.built(with_libp2p_value(d, signed_key(protobuf, signature)),
                     host=PresentedHost("RSA", f"rsa-{n.bit_length()}-multi-prime", protobuf))


#: The largest length four octets can state: 4 GiB - 1.
CLAIMED = 0xFFFFFFFF
MALFORMED_RULE = ("X.690 8.1.3: a length states the number of content octets that follow; "
                  "a receiver must not trust it before the octets are there")


def _claiming(content: bytes) -> bytes:
    """A SEQUENCE whose four-octet length claims CLAIMED octets, then ``content``."""
    return b"\x30\x84" + CLAIMED.to_bytes(4, "big") + content


@case("invalid.cost.certificate-length-claims-4-gib", "invalid", ErrorCode.MALFORMED_CERTIFICATE,
      importance="medium", rule=MALFORMED_RULE)
def certificate_length_claims_4_gib(ctx: BuildContext) -> Built:
    """The certificate's outer SEQUENCE claims 4 GiB - 1 content octets (a four-octet
    length); the octets of a valid certificate follow. A parser that allocates or reads ahead
    by the stated length before it checks it against what arrived spends memory or time; one
    that checks first refuses at once."""
    d = ctx.draft()
    _, start, _ = der.split_tlv(signed := d.sign())
    return ctx.built(d, files=(_claiming(signed[start:]),))


@case("invalid.cost.signed-key-length-claims-4-gib", "invalid", ErrorCode.EXTENSION_MALFORMED,
      importance="medium", rule=MALFORMED_RULE)
def signed_key_length_claims_4_gib(ctx: BuildContext) -> Built:
    """The libp2p extension's SignedKey SEQUENCE claims 4 GiB - 1 content octets (a four-octet
    length); its valid public key and signature follow. The certificate is re-signed, so only
    the extension is malformed."""
    d = ctx.draft()
    value = d.tbs.extensions[0]
    ext = der.children(value)[-1]  # extnValue OCTET STRING: the SignedKey's DER
    _, start, _ = der.split_tlv(ext)
    inner = ext[start:]
    _, body, _ = der.split_tlv(inner)
    return ctx.built(with_libp2p_value(d, _claiming(inner[body:])))


#: How deep the unknown extension nests: 3,000 SEQUENCEs of four-octet headers at most, about
#: 12 KB, so the certificate stays under the 16 KiB quic-go allows a QUIC handshake's crypto
#: stream (a 48 KB certificate is refused there with CRYPTO_BUFFER_EXCEEDED).
NESTING = 3_000
NESTED_OID = "1.3.6.1.4.1.53594.99.3"


def nested_sequences(depth: int) -> bytes:
    """``depth`` SEQUENCEs, each the only element of the one around it."""
    value = b""
    for _ in range(depth):
        value = der.tlv(0x30, value)
    return value


@case("valid.cost.nesting-in-an-unknown-extension", "valid", importance="medium",
      rule="tls.md: unknown non-critical extensions MUST be ignored (RFC 5280 4.2: a "
           "non-critical extension that is not recognised may be ignored)")
def nesting_in_an_unknown_extension(ctx: BuildContext) -> Built:
    """A non-critical extension of an unknown private OID whose value is 3,000 nested
    SEQUENCEs (about 12 KB of DER); the libp2p extension is first and valid. A verifier that
    ignores what it does not know accepts at once; one that parses every element recursively
    pays for the depth, or exhausts its stack."""
    nested = extension(NESTED_OID, nested_sequences(NESTING))
    return ctx.built(ctx.draft(extra_extensions=(nested,)))
