"""Bring your own certificates: ``fixturegen import`` turns DER or PEM certificates collected
anywhere (a live network, a bug report, another project's test suite) into a corpus the harness
runs in both modes.

``sources`` finds the certificates, their keys and their sidecar files; ``corpus`` decodes what
each certificate says about itself, takes the reference verifier's verdict as the expected
result (unless a sidecar states one) and writes the corpus as ``generate`` does, into a folder
it owns. The layer sits beside ``output/``: it uses the verifier and the manifest model, and
nothing above it.
"""
