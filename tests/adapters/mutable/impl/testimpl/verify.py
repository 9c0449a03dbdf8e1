"""A stand-in verifier for the tests of fixturegen's mutation campaigns: it judges a case by
its id, as a real implementation judges the certificate."""


def check(case_id):
    if case_id.startswith("invalid.self-signature"):
        return "reject", "bad self-signature"
    if case_id.startswith("invalid.extension"):
        return "reject", "bad extension signature"
    if "expired" in case_id:
        return "reject", "certificate expired"
    if case_id.startswith("nonexistent."):
        return "reject", "no such case"
    return "accept", None


def helper():
    """Reached by the upstream tests only, never by the corpus."""
    return 1 + 1
