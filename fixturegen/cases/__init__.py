"""The case catalogue. Importing this package registers every case, in a stable order."""

from fixturegen.cases import valid  # noqa: F401  (registers the valid matrix)
from fixturegen.cases.model import CATALOGUE, Built, Case, case
from fixturegen.cases.notes import NOTES

__all__ = ["CATALOGUE", "NOTES", "Built", "Case", "case"]
