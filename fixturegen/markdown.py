"""Text from a run, a manifest or an adapter, safe in a Markdown report.

Every report that quotes input text (an id, a description, an error an implementation printed,
a seed) goes through one of these: :func:`md` for running text and table cells, :func:`code`
for a code span. Neither lets the text end the line, the table cell or the span, start a
heading, a link, an image or an HTML tag. (The HTML pages are Jinja templates with
autoescape.)
"""

from __future__ import annotations

import re

from fixturegen.verify.inputs import printable

#: The characters that start or end markup mid-line (emphasis, code, links and images, HTML
#: tags, entities, table cells, strikethrough); a backslash makes each literal. (The text never
#: starts a line, so list and heading markers need no escape.)
_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!~&])")


def _one_line(text: object) -> str:
    """Printable (control characters as escapes), every line terminator a space, trimmed."""
    return " ".join(printable(str(text)).split())


def md(text: object) -> str:
    """``text`` as literal running text (or a table cell): one line, its markup escaped."""
    return _SPECIAL.sub(r"\\\1", _one_line(text))


def code(text: object) -> str:
    """``text`` as one inline code span (also inside a table cell): one line, fenced by more
    backticks than it holds in a row, its pipes escaped (GFM splits cells before spans)."""
    flat = _one_line(text).replace("|", "\\|")
    run = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    fence = "`" * (run + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
