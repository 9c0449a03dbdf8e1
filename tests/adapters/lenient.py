"""A test adapter that accepts every certificate it is sent (a real process on the harness
protocol; the fuzz tests use it as an implementation that disagrees in a known way).

With ``--crash-on-oid``, it exits (a crash) on a certificate holding the extension OID
1.3.6.1.4.1.53594.99.7, which only the fuzzer's ``extension-unknown`` operator writes: a
verdict no catalogue case gets from it, so those clusters are ``new``.
"""

import base64
import json
import sys

MARK = bytes.fromhex("060a2b0601040183a25a6307")  # OID 1.3.6.1.4.1.53594.99.7
crash = "--crash-on-oid" in sys.argv

for line in sys.stdin:
    request = json.loads(line)
    der = b"".join(base64.b64decode(c) for c in request.get("certificates", []))
    if crash and MARK in der:
        sys.exit(3)
    reply = {"id": request["id"], "verdict": "accept", "peer_id": None, "error": None}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
