"""A deliberately bad adapter for the driver's tests: what it does depends on the case id.

``ok.*`` accept (PeerId from the id's tail), ``reject.*`` reject, ``skip.*`` skip, ``hang.*``
sleep, ``crash.*`` exit 3 without answering, ``garbage.*`` print a non-JSON line, ``wrongid.*``
answer for another case, ``badverdict.*`` answer with an unknown verdict. Every start is
appended to the file named by the first argument, so a test can count restarts.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    with open(sys.argv[1], "a") as starts:
        starts.write("start\n")
    for line in sys.stdin:
        request = json.loads(line)
        case = request["id"]
        kind, _, tail = case.partition(".")
        reply: dict[str, object] = {"id": case, "verdict": "accept", "peer_id": tail or None,
                                    "error": None}
        if kind == "reject":
            reply = {"id": case, "verdict": "reject", "peer_id": None, "error": "nope: " + tail}
        elif kind == "skip":
            reply = {"id": case, "verdict": "skip", "peer_id": None, "error": "not handled"}
        elif kind == "hang":
            time.sleep(60)
        elif kind == "crash":
            return 3
        elif kind == "garbage":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            continue
        elif kind == "wrongid":
            reply["id"] = "someone-else"
        elif kind == "badverdict":
            reply["verdict"] = "maybe"
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
