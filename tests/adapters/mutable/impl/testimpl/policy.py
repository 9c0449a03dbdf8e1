"""The stand-in verifier's wording (a second file of its mutation scope, for bug models that
change several files)."""

EXTENSION_REASON = "bad extension signature"
