"""Imports point one way: a package imports only its own layer and the layers below it (as
``docs/architecture.md`` lists them). Imports for type checking only do not count; imports
inside a function do, since they run."""

from __future__ import annotations

import ast
from pathlib import Path

import streamwarden

#: The layers, lowest first; a module may import from its own layer and any earlier one.
LAYERS = [
    {"errors", "registry", "spark", "_engine"},
    {"sources", "sinks"},  # contracts and kinds: the config checks its kinds against them
    {"config"},
    {"validation"},
    {"operators", "testing"},
    {"checkpoints", "monitoring"},
    {"pipeline"},
    {"doctor"},
    {"cli"},
]
#: Modules that sit above their package's layer: the traffic generator uses validation's
#: reasons to label the records it spoils on purpose.
MODULE_LAYERS = {"sources.generator": 3}
#: Known back-references, each with the change that removes it (issue 16, part 4).
KNOWN = {("config.loader", "operators")}

ROOT = Path(streamwarden.__file__).parent


def layer(module: str) -> int:
    if module in MODULE_LAYERS:
        return MODULE_LAYERS[module]
    package = module.split(".")[0]
    return next(i for i, names in enumerate(LAYERS) if package in names)


def runtime_imports(path: Path) -> set[str]:
    """The streamwarden modules a file imports when it runs (not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found |= {n.removeprefix("streamwarden.") for n in names if n.startswith("streamwarden.")}
    return found


def test_no_module_imports_a_higher_layer():
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if len(parts) == 1 and parts[0] in ("__init__", "__main__"):
            continue  # the package's lazy public names
        module = ".".join(p for p in parts if p != "__init__")
        for imported in runtime_imports(path):
            target = imported.split(".")[0]
            if layer(imported) > layer(module) and (module, target) not in KNOWN:
                upward.append(f"{module} imports {imported}")
    assert upward == []
