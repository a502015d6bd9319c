#!/usr/bin/env bash
# Makes sure a Chromium (Debian's package) is installed, for `make docs-look`'s headless
# screenshots of the docs site, and prints its path. Installs the package with apt-get if
# absent: as root, or through sudo.
set -euo pipefail
bin="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$bin" ]; then
  as_root=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
      echo "ensure_chromium.sh: Chromium is not installed and this user cannot install it;" \
        "install Debian's package 'chromium' (apt-get install chromium)" >&2
      exit 2
    }
    as_root=(sudo)
  fi
  echo "installing Chromium (Debian package 'chromium') for the docs screenshots..." >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
  bin="$(command -v chromium)"
fi
echo "$bin"
