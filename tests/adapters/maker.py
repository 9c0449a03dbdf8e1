"""A test adapter for the interop stage: ``generate`` answers depend on the host key type.

``ed25519``: a real certificate (the corpus's valid ``matrix.ed25519.ed25519.fixed`` fixture,
with its PeerId); ``secp256k1``: base64 of bytes that are not DER; ``ecdsa``: no answer at all
(hang); ``rsa``: skip. ``certificate`` requests are accepted with the PeerId the caller expects,
except that the second argument, if given, names a verdict to give instead (``reject``). A third
argument names another corpus fixture to make for ``ed25519`` (with its PeerId, or the matrix
fixture's when the manifest states none).
"""

from __future__ import annotations

import base64
import json
import sys
import time
from pathlib import Path


def main() -> int:
    corpus = Path(sys.argv[1])
    fixture = "matrix.ed25519.ed25519.fixed"
    manifest = json.loads((corpus / "manifest.json").read_text())
    peer = next(f for f in manifest["fixtures"] if f["id"] == fixture)["expected"]["peer_id"]
    if len(sys.argv) > 3:
        fixture = sys.argv[3]
        peer = next(f for f in manifest["fixtures"] if f["id"] == fixture)["expected"][
            "peer_id"] or peer
    der = (corpus / f"certs/{fixture}.der").read_bytes()
    verdict = sys.argv[2] if len(sys.argv) > 2 else "accept"
    for line in sys.stdin:
        request = json.loads(line)
        case = request["id"]
        reply: dict[str, object] = {"id": case, "verdict": "skip", "peer_id": None,
                                    "error": "not this kind"}
        if request.get("kind") == "generate":
            kind = request["host_key_type"]
            if kind == "ed25519":
                reply = {"id": case, "verdict": "accept", "peer_id": peer,
                         "certificates": [base64.b64encode(der).decode()]}
            elif kind == "secp256k1":
                reply = {"id": case, "verdict": "accept", "peer_id": peer,
                         "certificates": [base64.b64encode(b"not a certificate").decode()]}
            elif kind == "ecdsa":
                time.sleep(60)
        elif request.get("kind") == "certificate":
            reply = ({"id": case, "verdict": "accept", "peer_id": request["expect_peer_id"]}
                     if verdict == "accept" else
                     {"id": case, "verdict": "reject", "error": "refused by the test adapter"})
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
