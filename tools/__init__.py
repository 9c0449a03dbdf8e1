"""Scripts of the checkout (run with python -m tools.NAME from its root)."""
