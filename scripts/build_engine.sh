#!/usr/bin/env bash
# Compiles the Java engine against the jars inside the installed pyspark wheel and packages it
# into the Python package. Needs only a JDK (javac, jar); skips the work when nothing changed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
out="$root/src/streamwarden/_engine/streamwarden-engine.jar"
sources=$(find "$root/engine/src/main/java" -name '*.java' | sort)
if [ -f "$out" ] && [ -z "$(find "$root/engine/src/main" "$root/scripts/javac_flags.sh" -newer "$out" -type f)" ]; then
  exit 0
fi
jars="$("$python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
mkdir -p "$(dirname "$out")"
classes="$(mktemp -d)"
trap 'rm -rf "$classes"' EXIT
# shellcheck source=scripts/javac_flags.sh
. "$root/scripts/javac_flags.sh"
javac "${JAVAC_FLAGS[@]}" -d "$classes" -cp "$jars/*" $sources
# built beside it and renamed into place: a JVM running with the old jar keeps reading it whole
jar --create --file "$classes/engine.jar" -C "$classes" .
mv -f "$classes/engine.jar" "$out"
echo "built $out"
