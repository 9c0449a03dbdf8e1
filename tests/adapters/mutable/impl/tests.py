"""The stand-in implementation's own tests (its 'upstream tests')."""

import sys

from testimpl.verify import check, helper

failures = []
if check("invalid.self-signature-corrupted.ed25519")[0] != "reject":
    failures.append("a corrupted self-signature is accepted")
if helper() != 2:
    failures.append("helper() is not 2")
print("tests:", "FAIL " + "; ".join(failures) if failures else "ok")
sys.exit(1 if failures else 0)
