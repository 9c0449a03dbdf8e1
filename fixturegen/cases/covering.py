"""Pairwise (t = 2) covering arrays: the fewest rows, greedily, that put every pair of values of
any two parameters together at least once, among the rows a constraint allows.

TLS-Anvil's way of keeping a combinatorial input model small: a fault tried under every
certificate scheme, extension criticality and position, and every host key type, would be the
full product; every *pair* of those values is what the catalogue needs (a bug that needs three
of them at once is rare). The greedy choice (AETG-like: each new row is the allowed row that
covers most pairs not yet covered) is deterministic, so the
same parameters always give the same array; among rows that cover as many new pairs, the one
whose pairs were used least is taken, so that the rows spread over the combinations. An
array can be grown slice by slice (``prior``), so that adding a value to one parameter adds
rows without changing those chosen before.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Row = dict[str, Any]


def pairwise(parameters: Mapping[str, Sequence[Any]],
             allowed: Callable[[Row], bool] = lambda row: True,
             prior: Sequence[Row] = (), focus: str | None = None) -> list[Row]:
    """Rows (dicts of parameter -> value, in ``parameters``' order) that cover every pair of
    values that some allowed row holds. A parameter with one value is in every row.

    ``prior``: rows chosen before, over the same parameters (a value a parameter no longer
    lists, such as an earlier slice's value of ``focus``, is in those rows only); the pairs
    they hold count as covered and as used, and only the new rows are returned. ``focus``:
    only the pairs with a value of that parameter must be covered; the others are still
    preferred while uncovered. Growing an array one slice at a time this way (each slice one
    value of ``focus``) leaves the earlier slices as they were."""
    names = list(parameters)
    if any(not values for values in parameters.values()):
        raise ValueError("a parameter without values")
    if focus is not None and focus not in parameters:
        raise ValueError(f"focus {focus!r} is not a parameter")
    candidates = [row for row in (dict(zip(names, combo, strict=True))
                                  for combo in itertools.product(*parameters.values()))
                  if allowed(row)]
    if not candidates:
        return []
    index = {n: {v: i for i, v in enumerate(parameters[n])} for n in names}
    pairs = list(itertools.combinations(range(len(names)), 2))
    focused = None if focus is None else names.index(focus)

    def keys(row: Row) -> frozenset[tuple[int, int, int, int]]:
        codes = [index[n].get(row[n], -1) for n in names]
        return frozenset((a, codes[a], b, codes[b]) for a, b in pairs)

    def must(k: tuple[int, int, int, int]) -> bool:
        return focused is None or focused in (k[0], k[2])

    covers = [keys(row) for row in candidates]
    holders: dict[tuple[int, int, int, int], list[int]] = {}
    for i, cover in enumerate(covers):
        for k in cover:
            holders.setdefault(k, []).append(i)
    fresh = set(holders)  # the pairs not yet covered
    # Each row's pairs not yet covered: those it must cover, and the others.
    gain = [sum(must(k) for k in cover) for cover in covers]
    extra = [len(cover) - g for cover, g in zip(covers, gain, strict=True)]
    usage = [0] * len(covers)  # how often each row's pairs were used already

    def take(cover: frozenset[tuple[int, int, int, int]]) -> None:
        for k in cover:
            newly = k in fresh
            fresh.discard(k)
            for i in holders.get(k, ()):
                usage[i] += 1
                if newly:
                    if must(k):
                        gain[i] -= 1
                    else:
                        extra[i] -= 1

    for row in prior:
        take(keys(row))
    rows: list[Row] = []
    while any(must(k) for k in fresh):
        # Most new pairs that must be covered first, then most other new pairs; among those,
        # the row whose pairs were used least (so that the rows spread over the combinations
        # rather than repeat one), then product order.
        best = max(range(len(candidates)), key=lambda i: (gain[i], extra[i], -usage[i], -i))
        rows.append(candidates[best])
        take(covers[best])
    return rows
