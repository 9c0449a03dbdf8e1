"""The case catalogue. Importing this package registers every case, in a stable order."""

from fixturegen.cases import acceptable, invalid, valid  # noqa: F401  (they register cases)
from fixturegen.cases.model import CATALOGUE, Built, Case, case
from fixturegen.cases.notes import NOTES

__all__ = ["CATALOGUE", "NOTES", "Built", "Case", "case"]
