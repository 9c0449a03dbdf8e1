"""A test adapter whose verdicts depend on the version it was built as: before 2.0 and from 2.1
on it accepts every certificate (as no PeerId), 2.0.x rejects every one. Enough to give a version
matrix classes that are introduced, fixed and come back.

With FIXTUREGEN_TEST_CORPUS naming a corpus, it also makes certificates (``generate``, Ed25519
only, other types skipped), like a generator bug that a release fixed: before 2.0 the corpus's
``acceptable.critical-basic-constraints`` (a sender flag), from 2.0 on the valid
``matrix.ed25519.ed25519.fixed``; each with the PeerId the manifest states."""

import base64
import json
import os
import sys
from pathlib import Path

version = sys.argv[1] if len(sys.argv) > 1 else "?"
rejects = version.startswith("2.0")
corpus = os.environ.get("FIXTUREGEN_TEST_CORPUS")


def made(request: dict) -> dict:
    if not corpus or request.get("host_key_type") != "ed25519":
        return {"id": request["id"], "verdict": "skip", "peer_id": None, "error": "not made"}
    case = ("acceptable.critical-basic-constraints" if version < "2"
            else "matrix.ed25519.ed25519.fixed")
    manifest = json.loads((Path(corpus) / "manifest.json").read_text())
    fixture = next(f for f in manifest["fixtures"] if f["id"] == case)
    der = (Path(corpus) / fixture["chain"][0]).read_bytes()
    return {"id": request["id"], "verdict": "accept", "peer_id": fixture["expected"]["peer_id"],
            "certificates": [base64.b64encode(der).decode()]}


for line in sys.stdin:
    request = json.loads(line)
    kind = request.get("kind", "certificate")
    if kind == "generate":
        answer = made(request)
    elif kind != "certificate":
        answer = {"id": request["id"], "verdict": "skip", "peer_id": None, "error": "not handled"}
    elif rejects:
        answer = {"id": request["id"], "verdict": "reject", "peer_id": None,
                  "error": f"built as {version}"}
    else:
        answer = {"id": request["id"], "verdict": "accept", "peer_id": None,
                  "error": f"built as {version}"}
    print(json.dumps(answer), flush=True)
