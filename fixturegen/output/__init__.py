"""Output: writes a built corpus (certificates, keys, manifest, transcripts, README) safely."""
