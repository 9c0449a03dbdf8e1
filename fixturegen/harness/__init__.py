"""Running third-party implementations over the corpus.

``protocol`` is the adapter protocol (a JSON object per line each way), ``adapters`` the shipped
adapters and how they are built, ``requests`` turns a corpus into requests, ``driver`` runs one
adapter process over them (time limit, restarts), ``compare`` turns a verdict into an outcome,
and ``report`` writes results.json, JUnit XML, Markdown and HTML.
"""
