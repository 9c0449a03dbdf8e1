"""Pairwise (t = 2) covering arrays: the fewest rows, greedily, that put every pair of values of
any two parameters together at least once, among the rows a constraint allows.

TLS-Anvil's way of keeping a combinatorial input model small: a fault tried under every
certificate scheme, extension criticality and position, and every host key type, would be the
full product; every *pair* of those values is what the catalogue needs (a bug that needs three
of them at once is rare). The greedy choice (AETG-like: each new row is the allowed row that
covers most pairs not yet covered) is deterministic, so the
same parameters always give the same array; among rows that cover as many new pairs, the one
whose pairs were used least is taken, so that the rows spread over the combinations.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Row = dict[str, Any]


def pairwise(parameters: Mapping[str, Sequence[Any]],
             allowed: Callable[[Row], bool] = lambda row: True) -> list[Row]:
    """Rows (dicts of parameter -> value, in ``parameters``' order) that cover every pair of
    values that some allowed row holds. A parameter with one value is in every row."""
    names = list(parameters)
    if any(not values for values in parameters.values()):
        raise ValueError("a parameter without values")
    candidates = [row for row in (dict(zip(names, combo, strict=True))
                                  for combo in itertools.product(*parameters.values()))
                  if allowed(row)]
    if not candidates:
        return []
    index = {n: {v: i for i, v in enumerate(parameters[n])} for n in names}
    pairs = list(itertools.combinations(range(len(names)), 2))

    def keys(row: Row) -> frozenset[tuple[int, int, int, int]]:
        codes = [index[n][row[n]] for n in names]
        return frozenset((a, codes[a], b, codes[b]) for a, b in pairs)

    covers = [keys(row) for row in candidates]
    holders: dict[tuple[int, int, int, int], list[int]] = {}
    for i, cover in enumerate(covers):
        for k in cover:
            holders.setdefault(k, []).append(i)
    fresh = set(holders)  # the pairs not yet covered
    gain = [len(cover) for cover in covers]  # each row's pairs not yet covered
    usage = [0] * len(covers)  # how often each row's pairs were used already
    rows: list[Row] = []
    while fresh:
        # Most new pairs first; among those, the row whose pairs were used least (so that
        # the rows spread over the combinations rather than repeat one), then product order.
        best = max(range(len(candidates)), key=lambda i: (gain[i], -usage[i], -i))
        rows.append(candidates[best])
        for k in covers[best]:
            newly = k in fresh
            fresh.discard(k)
            for i in holders[k]:
                usage[i] += 1
                gain[i] -= newly
    return rows
