"""Layers point one way: a package imports its own layer and the layers below, never above, and
no module imports itself back through others.

Read from the source with ``ast`` (nothing is imported), counting every import: at the top, in a
function (a lazy import is still a dependency) and under ``TYPE_CHECKING`` (a type named in an
annotation is a dependency of the design, if not of the running code: a contract that takes the
whole config's type ties every part to the config, and the config to every part).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SOURCE / "streamwarden"

#: streamwarden's packages (and top-level modules), lowest layer first. A package may import its
#: own layer and the layers below. A contract and its implementations (``sources/base.py`` beside
#: ``sources/files.py``) are one package, so one layer. A new package goes where what it imports
#: and what imports it put it; "root" is ``streamwarden/__init__.py``, the public API, which
#: re-exports from every layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    # errors, the name registry, the optional extras, Spark plumbing, Kafka plumbing (jar sets,
    # questions to a cluster)
    ("errors", "registry", "extras", "atomic", "spark", "_engine", "kafka"),
    # the building blocks of every part's settings: value types, units, defaults, secrets, the
    # shared [kafka] connection, the run context a part receives; the records' declared schema
    ("settings", "schema"),
    # contracts and their kinds, each kind with its own settings model; the history store
    ("sources", "sinks", "history"),
    ("validation",),  # raw records -> validated events or dead letters
    ("operators", "testing"),  # the operator contract, each operator, and their testers
    ("config",),  # the pipeline's config, assembled from the registries of parts
    ("plan",),  # one plan per run: the parts a config selects, their jars, settings and checks
    ("checkpoints", "monitoring", "doctor"),  # read, watch and diagnose what runs
    ("pipeline",),  # source -> validation -> operator -> sinks, watched and diagnosed
    # what runs only here, for demos, tests and benchmarks: local servers, the traffic generator,
    # the demos
    ("local",),
    ("cli", "root"),  # the command line and the public API
)

#: Modules that sit above their package's layer (none).
MODULE_LAYERS: dict[str, str] = {}

#: Imports that still point up, each with where it is being fixed; an entry that no longer
#: occurs fails the test, so that the list only shrinks.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(module: str) -> Iterator[str]:
    """The streamwarden modules ``module`` imports, each as the module it names: ``from a.b
    import c`` names ``a.b.c`` if that is a module, else ``a.b``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.split(".")[0] == "streamwarden")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up level - 1
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if base.split(".")[0] != "streamwarden":
                continue
            for alias in node.names:
                named = f"{base}.{alias.name}"
                yield named if named in MODULES else base


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "root"


LAYER_OF = {package: i for i, layer in enumerate(LAYERS) for package in layer}


def layer_of(module: str) -> int:
    return LAYER_OF[MODULE_LAYERS.get(module, package_of(module))]


def test_every_package_has_a_layer():
    unplaced = sorted({package_of(m) for m in MODULES} - set(LAYER_OF))
    assert not unplaced, f"add {unplaced} to LAYERS in {Path(__file__).name}"


def test_no_package_imports_a_higher_layer():
    upward = {
        (module, target)
        for module in MODULES
        for target in imports(module)
        if package_of(target) in LAYER_OF
        and package_of(module) in LAYER_OF
        and layer_of(target) > layer_of(module)
    }
    new = sorted(upward - set(KNOWN_UPWARD))
    assert not new, "imports pointing to a higher layer:\n" + "\n".join(
        f"  {m} ({package_of(m)}) imports {t} ({package_of(t)})" for m, t in new
    )
    gone = sorted(set(KNOWN_UPWARD) - upward)
    assert not gone, f"fixed, remove from KNOWN_UPWARD: {gone}"


def test_no_module_imports_itself_back_through_others():
    graph = {m: {t for t in imports(m) if t in MODULES and t != m} for m in MODULES}
    cyclic = sorted(m for m in graph if m in reachable(graph, m))
    assert not cyclic, f"modules that import themselves back through others: {cyclic}"


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """The modules ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    return seen
