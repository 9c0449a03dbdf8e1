"""A test adapter over the stand-in implementation (tests/adapters/mutable/impl): certificate
requests get its verifier's verdict and error text, generate requests a certificate its
generator (testimpl/make.py) makes, or skip for a host key type it cannot make; other requests
are skipped."""

import base64
import json
import sys

from testimpl.verify import check

for line in sys.stdin:
    request = json.loads(line)
    if request.get("cancel"):
        continue
    if request.get("kind") == "generate":
        try:
            from testimpl.make import make

            der, key, peer = make(request.get("host_key_type"))
            answer = {"id": request["id"], "verdict": "accept", "peer_id": peer,
                      "certificates": [base64.b64encode(der).decode()],
                      "certificate_key": key}
        except (ValueError, ImportError) as exc:  # a type it cannot make; no cryptography
            answer = {"id": request["id"], "verdict": "skip", "peer_id": None,
                      "error": str(exc)}
    elif request.get("kind", "certificate") != "certificate":
        answer = {"id": request["id"], "verdict": "skip", "peer_id": None, "error": "not handled"}
    else:
        verdict, error = check(request["id"])
        peer = request.get("expect_peer_id") if verdict == "accept" else None
        answer = {"id": request["id"], "verdict": verdict, "peer_id": peer, "error": error}
    print(json.dumps(answer), flush=True)
