#!/usr/bin/env bash
# Create the PyFlink venv for the Flink side of the benchmark.
#
#   bash bench/setup_flink.sh            # creates/updates <repo>/.venv-flink
#   FLINK_VENV=/some/dir bash bench/setup_flink.sh
#   PYTHON=python3.11 bash bench/setup_flink.sh
#
# Idempotent: if the venv already satisfies bench/requirements-flink.txt (same
# file content as at the last successful install, and pyflink imports), it
# does nothing. Needs only PyPI (pip) and a Java runtime (11, 17 or 21; the
# script checks for `java`, it does not install it: `apt-get install
# openjdk-17-jre-headless` on Debian). Python must be 3.9-3.12.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
venv="${FLINK_VENV:-$repo/.venv-flink}"
req="$here/requirements-flink.txt"
stamp="$venv/.requirements-flink.sha256"
python="${PYTHON:-}"

if [[ -z "$python" ]]; then
    for candidate in python3.11 python3.12 python3.10 python3.9 python3; do
        if command -v "$candidate" >/dev/null 2>&1; then
            python="$candidate"
            break
        fi
    done
fi
if [[ -z "$python" ]]; then
    echo "setup_flink: no python3 found (set PYTHON=...)" >&2
    exit 1
fi
if ! "$python" -c 'import sys; sys.exit(0 if (3, 9) <= sys.version_info[:2] <= (3, 12) else 1)'; then
    echo "setup_flink: $python is $("$python" -V 2>&1); apache-flink needs Python 3.9-3.12" >&2
    exit 1
fi
if ! command -v java >/dev/null 2>&1 && [[ -z "${JAVA_HOME:-}" ]]; then
    echo "setup_flink: warning: no java on PATH and JAVA_HOME unset; PyFlink needs Java 11/17/21" >&2
fi

want="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]] \
    && "$venv/bin/python" -c 'import pyflink' >/dev/null 2>&1; then
    echo "setup_flink: $venv is up to date"
    exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
    echo "setup_flink: creating $venv with $python"
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet --upgrade pip
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$req"
"$venv/bin/python" -c 'import pyflink; from importlib.metadata import version; print("setup_flink: apache-flink", version("apache-flink"))'
echo "$want" > "$stamp"
echo "setup_flink: ready: $venv/bin/python bench/flink_sessions.py --help"
