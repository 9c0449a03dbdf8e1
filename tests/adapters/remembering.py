"""A test adapter that remembers what it verified: fixturegen's reference verifier behind a
cache of accepted libp2p extensions keyed by the extension's bytes alone (go-libp2p's bug model
``key-ext-verification-cached``, in Python). A certificate whose extension it accepted before
is accepted again, with the PeerId it had then, whatever else the certificate holds; so only a
case sent after the certificate that filled the cache, to the same process, shows the bug.
"""

import base64
import json
import sys

from cryptography import x509

from fixturegen.verify.verifier import Verifier

LIBP2P = x509.ObjectIdentifier("1.3.6.1.4.1.53594.1.1")


def extension_of(der: bytes) -> bytes | None:
    try:
        ext = x509.load_der_x509_certificate(der).extensions.get_extension_for_oid(LIBP2P)
    except (ValueError, x509.ExtensionNotFound):
        return None
    value = ext.value
    return value.value if isinstance(value, x509.UnrecognizedExtension) else None


verifier = Verifier()
remembered: dict[bytes, str | None] = {}
for line in sys.stdin:
    request = json.loads(line)
    chain = [base64.b64decode(c) for c in request.get("certificates", [])]
    key = extension_of(chain[0]) if chain else None
    if key is not None and key in remembered:
        reply = {"id": request["id"], "verdict": "accept", "peer_id": remembered[key],
                 "error": None}
    else:
        verdict = verifier.verify(chain, expect_peer_id=request.get("expect_peer_id"))
        if verdict.accepted and key is not None:
            remembered[key] = verdict.peer_id
        reply = {"id": request["id"], "verdict": "accept" if verdict.accepted else "reject",
                 "peer_id": verdict.peer_id, "error": verdict.error}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
