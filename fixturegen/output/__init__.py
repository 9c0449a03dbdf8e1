"""Output: the manifest model (and its JSON Schema), the corpus writer, the rendered README."""
