#!/usr/bin/env bash
# Makes sure PostgreSQL's server programs (Debian's package) are installed, for the tests'
# throwaway database clusters (streamwarden.local.postgres), and prints their folder.
# Installs the package with apt-get if absent: as root, or through sudo.
set -euo pipefail
find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
bin="$(find_bin || true)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  as_root=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
      echo "ensure_postgres.sh: PostgreSQL is not installed and this user cannot install it;" \
        "install Debian's package 'postgresql' (apt-get install postgresql)" >&2
      exit 2
    }
    as_root=(sudo)
  fi
  echo "installing PostgreSQL (Debian package 'postgresql') for the tests..." >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  # Debian's package starts its own cluster on 5432; the tests start throwaway ones instead
  bin="$(find_bin)"
fi
echo "$bin"
