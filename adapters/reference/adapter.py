"""fixturegen's own reference verifier as a harness adapter: the example to copy.

Run it with ``.venv/bin/fixturegen harness run --name reference --
.venv/bin/python adapters/reference/adapter.py``.
Each request line is answered with one reply line, in order, flushed; a request it cannot read
is answered ``skip`` rather than crashing. A third-party adapter does the same with its
library's verifier in place of ``Verifier``.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

from fixturegen.verify.transcript import TranscriptChecker, scheme_name, transcript_hash_of
from fixturegen.verify.verifier import Verifier


def answer(checker: TranscriptChecker, request: dict[str, Any]) -> dict[str, Any]:
    case = str(request["id"])
    if request.get("kind") == "generate":
        return {"id": case, "verdict": "skip", "peer_id": None,
                "error": "the reference verifier makes no certificates of its own (the corpus "
                "is fixturegen's)"}
    chain = [base64.b64decode(c) for c in request["certificates"]]
    if request.get("kind", "certificate") == "certificate":
        verdict = checker.verifier.verify(chain, expect_peer_id=request.get("expect_peer_id"))
        if verdict.accepted:
            return {"id": case, "verdict": "accept", "peer_id": verdict.peer_id, "error": None}
        return {"id": case, "verdict": "reject", "peer_id": None,
                "error": f"{verdict.error}: {verdict.detail}"}
    content = base64.b64decode(request["signed_content"])
    context = str(request["context"])
    point = int(request["signature_scheme"])
    result = checker.verify(chain[0], context, scheme_name(point), point,
                            transcript_hash_of(context, content),
                            base64.b64decode(request["signature"]), content)
    if result.accepted:
        return {"id": case, "verdict": "accept", "peer_id": None, "error": None}
    return {"id": case, "verdict": "reject", "peer_id": None,
            "error": f"{result.error}: {result.detail}"}


def main() -> int:
    checker = TranscriptChecker(Verifier())
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = answer(checker, json.loads(line))
        except (ValueError, KeyError, TypeError) as exc:
            reply = {"id": "", "verdict": "skip", "peer_id": None,
                     "error": f"unreadable request: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
