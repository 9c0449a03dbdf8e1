"""The reference verifier. It imports nothing from the generator (a test enforces it)."""

from fixturegen.verify.codes import BORDERLINE_FLAGS, ERROR_CODES
from fixturegen.verify.verifier import Verdict, Verifier

__all__ = ["BORDERLINE_FLAGS", "ERROR_CODES", "Verdict", "Verifier"]
