"""The mutants of py-libp2p's verifier code, listed with cosmic-ray's operators (run by
``mutate list`` in the tools venv, where cosmic-ray is installed).

Usage: python crlist.py CONFIG TREE. Each mutant of the CONFIG's files that falls inside one of
its functions is printed as one JSON object (fixturegen's span convention: 1-based lines and
character columns, the end exclusive), the span found by comparing the file with cosmic-ray's
mutated text. Only the operators named in OPERATORS: the usual ones of the literature, without
cosmic-ray's number and arithmetic replacements (hundreds of mutants of byte arithmetic that say
nothing of a verifier's checks) and its variable inserters.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator

OPERATORS = (
    "core/ReplaceComparisonOperator_Eq_NotEq", "core/ReplaceComparisonOperator_NotEq_Eq",
    "core/ReplaceComparisonOperator_Lt_LtE", "core/ReplaceComparisonOperator_LtE_Lt",
    "core/ReplaceComparisonOperator_Gt_GtE", "core/ReplaceComparisonOperator_GtE_Gt",
    "core/ReplaceComparisonOperator_Is_IsNot", "core/ReplaceComparisonOperator_IsNot_Is",
    "core/AddNot", "core/ReplaceUnaryOperator_Delete_Not", "core/ReplaceTrueWithFalse",
    "core/ReplaceFalseWithTrue", "core/ReplaceAndWithOr", "core/ReplaceOrWithAnd",
    "core/ExceptionReplacer", "core/ReplaceBreakWithContinue", "core/ReplaceContinueWithBreak",
    "core/ZeroIterationForLoop",
)


def functions(text: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, last line) of every function, methods as Class.name."""
    out: list[tuple[str, int, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                walk(child, f"{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + child.name, child.lineno, child.end_lineno or child.lineno))

    walk(ast.parse(text), "")
    return out


def changed_lines(text: str, mutated: str) -> tuple[int, int]:
    """The mutated span as whole lines: (offset of its first line's start, length of the
    unchanged tail), so that a report shows the lines before and after."""
    old, new = text.splitlines(keepends=True), mutated.splitlines(keepends=True)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while (tail < min(len(old), len(new)) - head
           and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]):
        tail += 1
    return sum(len(line) for line in old[:head]), sum(len(line) for line in old[len(old) - tail:])


def position(text: str, offset: int) -> list[int]:
    before = text[:offset]
    line = before.count("\n") + 1
    return [line, offset - (before.rfind("\n") + 1) + 1]


def main() -> int:
    config = json.loads(Path(sys.argv[1]).read_text())
    tree = Path(sys.argv[2])
    wanted = set(config["functions"])
    seen: set[str] = set()
    for rel in config["files"]:
        text = (tree / rel).read_text(encoding="utf-8")
        scoped = [f for f in functions(text) if f[0] in wanted]
        module = get_ast(text)
        for name in OPERATORS:
            operator = get_operator(name)()
            occurrences = sum(len(list(operator.mutation_positions(node)))
                              for node in ast_nodes(module))
            for occurrence in range(occurrences):
                mutated = mutate_code(text, operator, occurrence)
                if mutated is None or mutated == text:
                    continue
                a, b = changed_lines(text, mutated)
                start = position(text, a)
                owner = [f for f in scoped if f[1] <= start[0] <= f[2]]
                if not owner:
                    continue
                short = name.split("/", 1)[1]
                ident = f"{rel}:{start[0]}:{start[1]}:{short}"
                if ident in seen:
                    ident = f"{ident}:{occurrence}"
                seen.add(ident)
                print(json.dumps({
                    "id": ident, "file": rel, "line": start[0], "function": owner[-1][0],
                    "operator": short, "start": start,
                    "end": position(text, len(text) - b),
                    "replacement": mutated[a:len(mutated) - b],
                    "original": text[a:len(text) - b]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
