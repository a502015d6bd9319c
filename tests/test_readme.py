"""The README works as written: it stays short, every command of its shell blocks is run by a
test (here, in this process on the test session's Spark, or by the test named for it, which
must exist), each config fragment of its tour is part of the example config a test runs, its
processor is the example's, its Python parses, and its links lead somewhere."""

from __future__ import annotations

import ast
import io
import re
import shlex
import tomllib
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from streamwarden.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)
MAX_LINES = 250

#: The demos as the README runs them, smaller: the same code path, a few batches.
SMALL = ["--users", "20", "--batches", "3"]
#: Commands this module runs, as ``streamwarden`` arguments.
RUN_HERE: dict[str, list[str]] = {
    # make demo = the set-up, then `streamwarden demo` (test_make_demo_is_the_demo_command)
    "make demo": ["demo", "--events", "400", *SMALL],
    ".venv/bin/streamwarden demo --example payments": ["demo", "--example", "payments", *SMALL],
    ".venv/bin/streamwarden demo --example logins": ["demo", "--example", "logins", *SMALL],
    ".venv/bin/streamwarden demo --example alerts": ["demo", "--example", "alerts", *SMALL],
}
#: Commands another test runs: the test's node id (file::function).
RUN_ELSEWHERE = {
    ".venv/bin/streamwarden demo --example windows": (
        "tests/examples/test_windows_end_to_end.py::test_the_demo_says_its_accounting_balances"
    ),
    ".venv/bin/streamwarden demo --example refunds": (
        "tests/examples/test_refunds_end_to_end.py::test_the_demo_says_its_accounting_balances"
    ),
    ".venv/bin/streamwarden generate --example payments": (
        "tests/cli/test_generate.py::"
        "test_an_example_without_a_folder_goes_into_its_own_landing_folder"
    ),
    ".venv/bin/streamwarden run examples/payments.toml --once --drain": (
        "tests/examples/test_payments_end_to_end.py::test_every_record_ends_in_one_place"
    ),
}
#: `make test` is what CI runs; `make docs` is part of it.
RUN_BY_CI = {"make test", "make docs"}
#: The example config each operator's tour fragment is part of.
EXAMPLE_OF = {
    "sessions": "payments.toml",
    "patterns": "logins.toml",
    "process": "payment_alerts.toml",
    "windows": "merchant_windows.toml",
    "join": "refunds_join.toml",
}


def blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    return [m.group(2) for m in BLOCK.finditer(text) if m.group(1) == language]


def readme_commands() -> list[str]:
    """Every command of the README's shell blocks, without its comment, words single-spaced."""
    found = []
    for block in blocks("bash"):
        for line in block.splitlines():
            for command in line.split("&&"):
                words = shlex.split(command, comments=True)
                if words:
                    found.append(" ".join(words))
    return found


def test_the_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; at most {MAX_LINES}"


def test_every_readme_command_is_run_by_a_test():
    commands = readme_commands()
    assert len(commands) >= 8
    covered = RUN_HERE.keys() | RUN_ELSEWHERE.keys() | RUN_BY_CI
    untested = [c for c in commands if c not in covered]
    assert not untested, f"README commands no test runs: {untested}"


def test_every_command_named_here_is_in_the_readme():
    commands = set(readme_commands())
    stale = [c for c in (*RUN_HERE, *RUN_ELSEWHERE, *RUN_BY_CI) if c not in commands]
    assert not stale, f"no longer in README.md, drop them here: {stale}"


@pytest.mark.parametrize("command", sorted(RUN_ELSEWHERE))
def test_the_test_named_for_a_command_exists_and_runs_it(command):
    path, _, function = RUN_ELSEWHERE[command].partition("::")
    source = (ROOT / path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert function in names, f"{RUN_ELSEWHERE[command]} is gone"
    words = shlex.split(command)[1:]  # what the test must call: the command and its options
    if words[0] == "demo":  # a demo test runs the example by name through the command line
        assert f'"--example", "{words[2]}"' in source
    elif words[0] == "generate":
        assert '"generate", "--example", example' in source and '("payments",' in source
    else:  # run: the example's own config, through `streamwarden run ... --once --drain`
        assert 'example_config("payments"' in source and "run_cli(" in source


def test_make_demo_is_the_demo_command():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ndemo: setup\n", 1)[1].split("\n", 1)[0]
    assert recipe.strip() == "$(BIN)/streamwarden demo"


@pytest.mark.spark
@pytest.mark.parametrize("command", sorted(RUN_HERE))
def test_the_command_runs_and_its_accounting_balances(command, spark, workdir):
    printed = io.StringIO()
    with redirect_stdout(printed):  # in this process: the JVM is the test session's
        code = main([*RUN_HERE[command], "--out", str(workdir / "demo")])
    assert code == 0, printed.getvalue()[-3000:]
    accounting = [
        line for line in printed.getvalue().splitlines() if line.startswith("accounting:")
    ]
    assert accounting and accounting[-1].endswith(": balanced"), accounting


def is_part(fragment: Any, whole: Any) -> bool:
    """Whether ``fragment`` is ``whole`` with some keys left out (lists element by element)."""
    if isinstance(fragment, dict):
        return isinstance(whole, dict) and all(
            k in whole and is_part(v, whole[k]) for k, v in fragment.items()
        )
    if isinstance(fragment, list):
        return (
            isinstance(whole, list)
            and len(fragment) == len(whole)
            and all(is_part(f, w) for f, w in zip(fragment, whole, strict=True))
        )
    return bool(fragment == whole)


@pytest.mark.parametrize("text", blocks("toml"))
def test_each_tour_config_is_part_of_its_example(text):
    fragment = tomllib.loads(text)
    operator = fragment.get("operator", "sessions")
    example = tomllib.loads((ROOT / "examples" / EXAMPLE_OF[operator]).read_text("utf-8"))
    assert is_part(fragment, example), f"not as in examples/{EXAMPLE_OF[operator]}:\n{text}"


def test_the_tour_shows_every_operator():
    shown = {tomllib.loads(t).get("operator", "sessions") for t in blocks("toml")}
    assert shown == EXAMPLE_OF.keys()


@pytest.mark.parametrize("text", blocks("python"))
def test_the_python_parses(text):
    ast.parse(text)


def test_the_tour_s_processor_is_the_example_s():
    [shown] = [t for t in blocks("python") if "class BigPaymentAlert" in t]
    example = ast.parse((ROOT / "examples" / "alerts.py").read_text(encoding="utf-8"))
    [own] = [n for n in example.body if isinstance(n, ast.ClassDef)]
    assert ast.dump(ast.parse(shown).body[0]) == ast.dump(own)


def test_every_relative_link_leads_to_a_file():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert links
    missing = [link for link in links if "://" not in link and not (ROOT / link).exists()]
    assert not missing, missing
