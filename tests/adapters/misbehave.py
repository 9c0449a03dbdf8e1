"""A deliberately bad adapter for the driver's tests: what it does depends on the case id.

``ok.*`` accept (PeerId from the id's tail), ``reject.*`` reject, ``skip.*`` skip, ``hang.*``
sleep, ``crash.*`` exit 3 without answering, ``garbage.*`` print a non-JSON line, ``wrongid.*``
answer for another case, ``badverdict.*`` answer with an unknown verdict, ``twice.*`` answer
twice, ``flood.*`` answer with a 9 MB line, ``stderr.*`` write 20 MB to stderr then accept,
``surrogate.*`` send a lone surrogate in the error text, ``deep.*`` a reply nested 100,000 deep,
``fork.*`` start a child that holds stdout open (its pid appended to the starts file as
``child PID``) and hang. Every start is appended to the file named by the first argument, so a
test can count restarts. With ``--mute`` as second argument it reads requests and never
answers; with ``--mute-first``, only its first start is mute (a failure that a second attempt
does not meet).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time


def main() -> int:
    with open(sys.argv[1], "a+") as starts:
        starts.write("start\n")
        starts.seek(0)
        first = starts.read().count("start") == 1
    mute = sys.argv[2:3] == ["--mute"] or (sys.argv[2:3] == ["--mute-first"] and first)
    for line in sys.stdin:
        if mute:
            continue
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
        elif kind == "twice":
            sys.stdout.write(json.dumps(reply) + "\n")
        elif kind == "flood":
            sys.stdout.write('{"id": "' + "x" * 9_000_000 + '"}\n')
            sys.stdout.flush()
            continue
        elif kind == "stderr":
            for _ in range(20):
                sys.stderr.write("e" * 1_000_000)
            sys.stderr.flush()
        elif kind == "surrogate":
            text = json.dumps(case)
            sys.stdout.write('{"id": ' + text + ', "verdict": "reject", "error": "\\ud800"}\n')
            sys.stdout.flush()
            continue
        elif kind == "deep":
            sys.stdout.write("[" * 100_000 + "]" * 100_000 + "\n")
            sys.stdout.flush()
            continue
        elif kind == "fork":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                     stdout=sys.stdout)
            with open(sys.argv[1], "a") as starts:
                starts.write(f"child {child.pid}\n")
            time.sleep(600)
        elif kind == "wrongid":
            reply["id"] = "someone-else"
        elif kind == "badverdict":
            reply["verdict"] = "maybe"
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
