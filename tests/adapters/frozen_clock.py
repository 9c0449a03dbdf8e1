"""A test adapter whose clock stopped when it started: fixturegen's reference verifier, always
asked about the moment this process began (a "now" read once, when the module loaded; js-libp2p's
bug model ``validity-now-cached-at-load``, in Python)."""

import base64
import json
import sys
from datetime import UTC, datetime

from fixturegen.verify.verifier import Verifier

STARTED = datetime.now(UTC)
verifier = Verifier()
for line in sys.stdin:
    request = json.loads(line)
    chain = [base64.b64decode(c) for c in request.get("certificates", [])]
    verdict = verifier.verify(chain, expect_peer_id=request.get("expect_peer_id"), at=STARTED)
    reply = {"id": request["id"], "verdict": "accept" if verdict.accepted else "reject",
             "peer_id": verdict.peer_id, "error": verdict.error}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
