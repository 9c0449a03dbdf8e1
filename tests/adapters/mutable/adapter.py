"""A test adapter over the stand-in verifier (tests/adapters/mutable/impl): certificate requests
get its verdict and error text; other requests are skipped."""

import json
import sys

from testimpl.verify import check

for line in sys.stdin:
    request = json.loads(line)
    if request.get("cancel"):
        continue
    if request.get("kind", "certificate") != "certificate":
        answer = {"id": request["id"], "verdict": "skip", "peer_id": None, "error": "not handled"}
    else:
        verdict, error = check(request["id"])
        peer = request.get("expect_peer_id") if verdict == "accept" else None
        answer = {"id": request["id"], "verdict": verdict, "peer_id": peer, "error": error}
    print(json.dumps(answer), flush=True)
