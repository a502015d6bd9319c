"""The API reference renders our reStructuredText docstrings as Markdown
(scripts/griffe_rest.py, named in mkdocs.yml)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("griffe_rest", ROOT / "scripts" / "griffe_rest.py")
assert _spec is not None and _spec.loader is not None
griffe_rest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(griffe_rest)


def test_inline_code_and_roles_become_markdown_code():
    text = "Give ``gap`` to :func:`~streamwarden.sessionize` or :class:`Schema`."
    assert griffe_rest.rest_to_markdown(text) == "Give `gap` to `sessionize` or `Schema`."


def test_a_literal_block_becomes_a_fenced_python_block():
    text = "Example::\n\n    result = sessionize(events)\n    run_query(result)\n\nThen more."
    assert griffe_rest.rest_to_markdown(text).splitlines() == [
        "Example:",
        "",
        "```python",
        "result = sessionize(events)",
        "run_query(result)",
        "```",
        "",
        "Then more.",
    ]


def test_the_site_uses_the_extension():
    assert "scripts/griffe_rest.py:RestInline" in (ROOT / "mkdocs.yml").read_text()
