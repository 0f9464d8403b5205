#!/usr/bin/env bash
# Installs the official MCP client SDKs that the tests and benchmarks drive `toolbind serve`
# with, into one folder outside the repository:
#   $TOOLBIND_CLIENTS (default ~/.cache/toolbind/clients)
#     py/    a venv with the Python SDK (requirements.txt); tests run py/bin/python
#     node/  node_modules with the TypeScript SDK (package.json)
#     servers/  the official MCP reference servers (tests/mcp-servers/package.json), whose
#               tool lists the snapshot tests take live; bins in node_modules/.bin
#     conformance/  the official MCP conformance suite (tests/conformance/package.json)
#                   and the Node 22 it needs (node22/), which runs the suite only: tools
#                   keep the machine's Node 20
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
servers="$here/../mcp-servers/package.json"
if ! cmp -s "$servers" "$dest/servers/installed.json"; then
  echo "installing the MCP reference servers into $dest/servers"
  rm -rf "$dest/servers"
  mkdir -p "$dest/servers"
  cp "$servers" "$dest/servers/package.json"
  (cd "$dest/servers" && npm install --silent --no-audit --no-fund >/dev/null)
  cp "$servers" "$dest/servers/installed.json"
fi
# The conformance suite needs Node 22 or later; take it from the npm registry (as .ci/run
# takes Node 20), pinned, for the suite alone.
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "no Node 22 package for $(uname -m)" >&2; exit 1 ;;
esac
node22="node-linux-$arch@22.23.5"
suite="$here/../conformance/package.json"
if ! { cmp -s "$suite" "$dest/conformance/installed.json" \
    && [ "$(cat "$dest/conformance/node22.txt" 2>/dev/null)" = "$node22" ]; }; then
  echo "installing the MCP conformance suite and $node22 into $dest/conformance"
  rm -rf "$dest/conformance"
  mkdir -p "$dest/conformance/node22"
  cp "$suite" "$dest/conformance/package.json"
  (cd "$dest/conformance" && npm install --silent --no-audit --no-fund >/dev/null)
  npm install --no-save --silent --no-audit --no-fund --prefix "$dest/conformance/node22" "$node22" >/dev/null
  ln -sfn "node_modules/node-linux-$arch/bin" "$dest/conformance/node22/bin"
  echo "$node22" > "$dest/conformance/node22.txt"
  cp "$suite" "$dest/conformance/installed.json"
fi
echo "MCP clients: $("$dest/py/bin/python" -c 'import importlib.metadata as m; print("python mcp", m.version("mcp"))'), typescript sdk $(node -p "require('$dest/node/node_modules/@modelcontextprotocol/sdk/package.json').version"), reference servers $(cd "$dest/servers/node_modules/@modelcontextprotocol" && node -p "['everything','filesystem','memory'].map(s => s + ' ' + require('./server-' + s + '/package.json').version).join(', ')"), conformance suite $(cd "$dest/conformance/node_modules" && node -p "require('./conformance-0.1/package.json').version + ' and ' + require('./conformance-0.2/package.json').version") on node $("$dest/conformance/node22/bin/node" --version)"
