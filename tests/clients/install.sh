#!/usr/bin/env bash
# Installs the official MCP client SDKs that the tests and benchmarks drive `toolbind serve`
# with, into one folder outside the repository:
#   $TOOLBIND_CLIENTS (default ~/.cache/toolbind/clients)
#     py/    a venv with the Python SDK (requirements.txt); tests run py/bin/python
#     node/  node_modules with the TypeScript SDK (package.json)
# Idempotent: a part is reinstalled only when its pinned list changed. Tests look for the
# clients in the same place (cli/tests/common: `clients_dir()`), and fail saying to run
# this script when they are missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest="${TOOLBIND_CLIENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/toolbind/clients}"
mkdir -p "$dest"

# The copy of each pinned list is written only after its install succeeded, so an
# interrupted install is redone on the next run.
if ! cmp -s "$here/requirements.txt" "$dest/py/installed.txt"; then
  echo "installing the MCP Python SDK into $dest/py"
  rm -rf "$dest/py"
  python3 -m venv "$dest/py"
  "$dest/py/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$dest/py/installed.txt"
fi

if ! cmp -s "$here/package.json" "$dest/node/installed.json"; then
  echo "installing the MCP TypeScript SDK into $dest/node"
  rm -rf "$dest/node"
  mkdir -p "$dest/node"
  cp "$here/package.json" "$dest/node/package.json"
  (cd "$dest/node" && npm install --silent --no-audit --no-fund >/dev/null)
  cp "$here/package.json" "$dest/node/installed.json"
fi
echo "MCP clients: $("$dest/py/bin/python" -c 'import importlib.metadata as m; print("python mcp", m.version("mcp"))'), typescript sdk $(node -p "require('$dest/node/node_modules/@modelcontextprotocol/sdk/package.json').version")"
