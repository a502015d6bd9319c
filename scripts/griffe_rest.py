"""A griffe extension for the docs site's API reference (mkdocs.yml): our docstrings are written
with reStructuredText's inline marks, which the site renders as Markdown. ``code`` becomes
`code`, a role such as :class:`~streamwarden.testing.SessionTester` becomes `SessionTester`,
and a literal block introduced by ``::`` becomes a fenced Python block."""

from __future__ import annotations

import re
import textwrap
from typing import Any

from griffe import Extension

_ROLE = re.compile(r":[\w:]+:`~?([^`]+)`")


def rest_to_markdown(text: str) -> str:
    """``text`` (a docstring) with reST's inline marks and literal blocks as Markdown."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::") and i + 1 < len(lines) and not lines[i + 1].strip():
            block, j = _indented_block(lines, i + 2)
            if block:
                head = line.rstrip()[:-2].rstrip()
                out += [_inline(head) + (":" if head and not head.endswith(":") else ""), ""]
                out += ["```python", *textwrap.dedent("\n".join(block)).splitlines(), "```"]
                i = j
                continue
        out.append(_inline(line))
        i += 1
    return "\n".join(out)


def _indented_block(lines: list[str], start: int) -> tuple[list[str], int]:
    block: list[str] = []
    j = start
    while j < len(lines) and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
        block.append(lines[j])
        j += 1
    while block and not block[-1].strip():
        block.pop()
    return block, start + len(block)  # the blank lines after it stay, as a paragraph break


def _inline(line: str) -> str:
    line = _ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", line)
    return line.replace("``", "`")


class RestInline(Extension):
    """Rewrites every docstring as it is loaded."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rest_to_markdown(obj.docstring.value)
