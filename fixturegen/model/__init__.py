"""The typed model at the bottom of the generator: the manifest and transcripts files as
pydantic models, their JSON Schemas generated from them, and the one JSON serialisation.

The catalogue's builders return these models; ``output/`` only writes them. This package
imports nothing from the toolkit but the verifier's vocabulary (``verify/codes.py``).
"""
