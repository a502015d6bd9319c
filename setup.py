"""One check added to setuptools' build (the project is described in pyproject.toml): a wheel
is never built without the engine jar, which is built from engine/ by scripts/build_engine.sh
and git-ignored. Without the check such a wheel installs fine and fails at its first run.

Editable installs (``pip install -e``, which ``make setup`` runs before it builds the jar) are
not wheels of this kind and are not checked.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel

ENGINE_JAR = Path("src", "streamwarden", "_engine", "streamwarden-engine.jar")


class WheelWithEngine(bdist_wheel):
    """``bdist_wheel`` that first checks the engine jar is there."""

    def run(self) -> None:
        jar = Path(__file__).resolve().parent / ENGINE_JAR
        if not jar.is_file():
            raise SystemExit(
                f"error: no engine jar at {ENGINE_JAR}: a wheel without it would fail at run "
                "time; build it first with scripts/build_engine.sh (needs a JDK 17; "
                "`make setup` does it), then build the wheel again"
            )
        super().run()


setup(cmdclass={"bdist_wheel": WheelWithEngine})
