"""The case catalogue. Importing this package registers every case, in a stable order."""

from fixturegen.cases import (  # noqa: F401  (they register cases)
    acceptable,
    invalid,
    times,
    valid,
)
from fixturegen.cases.model import CATALOGUE, Built, Case, case
from fixturegen.cases.notes import NOTES

__all__ = ["CATALOGUE", "NOTES", "Built", "Case", "case"]
