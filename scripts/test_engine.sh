#!/usr/bin/env bash
# Compiles the engine and its JUnit tests (engine/src/test/java) with the build's javac flags
# against the pyspark wheel's jars plus JUnit (fetched from Maven Central by fetch_jars.sh), and
# runs them with JUnit's console launcher, without Spark. Exits non-zero when a test fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
jars="$("$python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
junit="$("$root/scripts/fetch_jars.sh" test)"
# shellcheck source=scripts/javac_flags.sh
. "$root/scripts/javac_flags.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
find "$root/engine/src/main/java" -name '*.java' | sort > "$work/main.txt"
find "$root/engine/src/test/java" -name '*.java' | sort > "$work/test.txt"
javac "${JAVAC_FLAGS[@]}" -d "$work/main" -cp "$jars/*" "@$work/main.txt"
javac "${JAVAC_FLAGS[@]}" -d "$work/test" -cp "$work/main:$jars/*:$junit/*" "@$work/test.txt"
# The launcher's own --class-path does not expand `dir/*`: the JVM's class path does.
java -cp "$junit/*:$work/test:$work/main:$jars/*" org.junit.platform.console.ConsoleLauncher \
  execute --scan-class-path "$work/test" \
  --disable-banner --details=summary --details-theme=ascii --fail-if-no-tests
