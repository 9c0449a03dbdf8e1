"""The harness over many builds of one implementation: the version matrix (``harness matrix``),
the one-case check for ``git bisect run`` (``harness check``) and the comparison of two builds'
handshake cost (``harness profile``). Builds come from :mod:`fixturegen.builds`; each run is an
ordinary harness run (:mod:`fixturegen.harness.session`).
"""
