"""Reading a JSON file a user hands fixturegen (a manifest, transcripts, a results file).

Untrusted, so bounded before anything uses it: a regular file of at most ``MAX_JSON_BYTES``,
UTF-8 (no lone surrogate escaped in a string either), no ``NaN``/``Infinity``, no float that
overflows (``1e999``), no integer longer than ``MAX_INT_DIGITS`` digits, nesting at most
``MAX_DEPTH`` deep; then validated against the JSON Schema fixturegen ships for it
(``fixturegen/schemas/``). Every failure is one :class:`~fixturegen.verify.inputs.InputError`
line that names the file and the field.
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from fixturegen.verify.inputs import InputError, is_unicode, printable, read_bounded

MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 32
MAX_INT_DIGITS = 40
SCHEMAS = ("manifest", "transcripts", "conformance-results", "matrix", "mutation")


class _Bad(ValueError):
    pass


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Bad(f"an integer of {len(text.lstrip('-'))} digits (limit {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    value = float(text[:64]) if len(text) <= 64 else math.inf
    if not math.isfinite(value):
        raise _Bad(f"the number {text[:40]} is out of range")
    return value


def _constant(text: str) -> float:
    raise _Bad(f"{text} is not JSON")


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once: a key twice is ambiguous (parsers differ
    on which copy wins), so it is refused."""
    out = dict(pairs)
    if len(out) != len(pairs):
        twice = next(k for n, (k, _) in enumerate(pairs) if k in dict(pairs[:n]))
        raise _Bad(f"the key {twice!r} twice in one object")
    return out


def _shape_problem(data: Any) -> str | None:
    """Nesting deeper than MAX_DEPTH, or a string (or key) that is not Unicode: where, what."""
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(data, 1, ())]
    while stack:
        item, depth, where = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH}"
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if isinstance(key, str) and not is_unicode(key):
                    return f"{_where(where)}: a key holds a lone surrogate (\\ud800-\\udfff)"
                stack.append((child, depth + 1, (*where, key)))
        elif isinstance(item, str) and not is_unicode(item):
            return f"{_where(where)}: a lone surrogate (\\ud800-\\udfff) in a string"
    return None


@cache
def _validator(schema: str) -> Draft202012Validator:
    text = (resources.files("fixturegen") / "schemas" / f"{schema}.schema.json").read_text()
    return Draft202012Validator(json.loads(text))


def _where(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def strict_loads(text: str | bytes) -> Any:
    """JSON as every file fixturegen reads back is parsed: integers and numbers bounded, no
    NaN or Infinity, no key twice in an object. Raises ValueError (one line)."""
    return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant,
                      object_pairs_hook=unique_keys)


def load_json(path: Path, schema: str, what: str, limit: int = MAX_JSON_BYTES) -> Any:
    """The parsed content of ``path``, valid against the shipped schema ``schema``."""
    name = printable(str(path))
    raw = read_bounded(path, limit)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name} is not a {what}: not UTF-8 (byte {exc.start})") from None
    try:
        data = strict_loads(text)
    except _Bad as exc:
        raise InputError(f"{name} is not a {what}: {exc}") from None
    except RecursionError:
        raise InputError(f"{name} is not a {what}: nested deeper than {MAX_DEPTH}") from None
    except ValueError as exc:  # json.JSONDecodeError
        raise InputError(f"{name} is not a {what}: not JSON ({exc})") from None
    if (problem := _shape_problem(data)) is not None:
        raise InputError(f"{name} is not a {what}: {problem}")
    error = best_match(_validator(schema).iter_errors(data))
    if error is not None:
        message = " ".join(error.message.split())
        if len(message) > 160:
            message = message[:157] + "..."
        raise InputError(printable(f"{name} is not a {what}: {_where(error.absolute_path)}: "
                                   f"{message}"))
    return data
