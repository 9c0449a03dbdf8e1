"""The case catalogue. Importing this package registers every case, in a stable order."""

from fixturegen.cases import (  # noqa: F401  (they register cases)
    acceptable,
    boundaries,
    cost,
    faults,
    invalid,
    peerids,
    state,
    times,
    valid,
)
from fixturegen.cases.context import BuildContext, Built
from fixturegen.cases.model import CATALOGUE, Case, Rendered, case

__all__ = ["CATALOGUE", "BuildContext", "Built", "Case", "Rendered", "case"]
