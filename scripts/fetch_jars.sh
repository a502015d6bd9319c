#!/usr/bin/env bash
# Fetches one set of JVM jars listed in engine/deps/pom.xml (a profile there) from Maven Central
# into .cache/jars/<set>/ with the ordinary Maven client, and prints that folder. Skips the work
# when the set is already there and the pom has not changed since.
#
#   scripts/fetch_jars.sh test     # the JUnit console launcher
#
# An installed package does without it: it fetches the same jars itself from the list
# scripts/lock_jars.py writes (streamwarden.spark.jar_sets, `streamwarden jars --fetch`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
set_name="${1:?usage: fetch_jars.sh <set>, a profile id of engine/deps/pom.xml such as test}"
pom="$root/engine/deps/pom.xml"
out="$root/.cache/jars/$set_name"
stamp="$out/.fetched"
if [ -f "$stamp" ] && [ "$stamp" -nt "$pom" ]; then
  echo "$out"
  exit 0
fi
if ! grep -q "<id>$set_name</id>" "$pom"; then
  echo "fetch_jars.sh: no profile '$set_name' in $pom" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$out"
mvn -q -B -f "$pom" -P "$set_name" dependency:copy-dependencies -DoutputDirectory="$out" >&2
touch "$stamp"
echo "$out"
