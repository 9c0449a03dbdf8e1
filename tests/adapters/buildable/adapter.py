"""A test adapter whose verdicts depend on the version it was built as: before 2.0 and from 2.1
on it accepts every certificate (as no PeerId), 2.0.x rejects every one. Enough to give a version
matrix classes that are introduced, fixed and come back."""

import json
import sys

version = sys.argv[1] if len(sys.argv) > 1 else "?"
rejects = version.startswith("2.0")
for line in sys.stdin:
    request = json.loads(line)
    if request.get("kind", "certificate") != "certificate":
        answer = {"id": request["id"], "verdict": "skip", "peer_id": None, "error": "not handled"}
    elif rejects:
        answer = {"id": request["id"], "verdict": "reject", "peer_id": None,
                  "error": f"built as {version}"}
    else:
        answer = {"id": request["id"], "verdict": "accept", "peer_id": None,
                  "error": f"built as {version}"}
    print(json.dumps(answer), flush=True)
