#!/usr/bin/env bash
# Reproduce bench/discovery/catalog/*.json: install the pinned MCP servers (npm, pip) into
# a work folder and write each server's tool list with `toolbind mcp snapshot`.
# No real credentials are needed: the servers get dummy keys and list their tools offline.
#
#   bench/discovery/snapshot-catalog.sh [WORK_DIR]      (from the repository root)
#
# WORK_DIR: where the packages are installed (default: a new temp folder).
# TOOLBIND: the toolbind binary (default target/debug/toolbind).
# OUT_DIR:  where snapshots are written (default bench/discovery/catalog).
# Needs node >= 20 with npm, and python3 (>= 3.10) with venv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TOOLBIND=$(realpath "${TOOLBIND:-target/debug/toolbind}")
OUT_DIR=$(realpath -m "${OUT_DIR:-$here/catalog}")
work=$(realpath -m "${1:-$(mktemp -d)}")
mkdir -p "$work" "$OUT_DIR"
echo "work folder: $work" >&2

# --- install (exact versions) ---------------------------------------------------------
export PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
cd "$work"
[[ -f package.json ]] || echo '{"name":"catalog-work","private":true}' >package.json
npm install --no-audit --no-fund --save-exact \
  @modelcontextprotocol/server-filesystem@2026.8.31 \
  @modelcontextprotocol/server-memory@2026.8.31 \
  @modelcontextprotocol/server-everything@2026.8.31 \
  @modelcontextprotocol/server-sequential-thinking@2026.8.31 \
  @modelcontextprotocol/server-github@2025.4.8 \
  @modelcontextprotocol/server-gitlab@2025.4.25 \
  @modelcontextprotocol/server-slack@2025.4.25 \
  @modelcontextprotocol/server-puppeteer@2025.5.12 \
  @modelcontextprotocol/server-google-maps@0.6.2 \
  @modelcontextprotocol/server-brave-search@0.6.2 \
  @modelcontextprotocol/server-postgres@0.6.2 \
  @modelcontextprotocol/server-gdrive@2025.1.14 \
  @modelcontextprotocol/server-everart@0.6.2 \
  @playwright/mcp@0.0.86 \
  chrome-devtools-mcp@1.11.0 \
  @notionhq/notion-mcp-server@2.5.2 \
  @wonderwhy-er/desktop-commander@0.2.52 \
  mcp-server-kubernetes@4.1.7 \
  @upstash/context7-mcp@4.1.1 \
  firecrawl-mcp@3.26.0 \
  tavily-mcp@0.2.22 \
  exa-mcp-server@3.4.1 \
  @sentry/mcp-server@0.39.0
[[ -x venv/bin/python ]] || python3 -m venv venv
venv/bin/pip install -q mcp==2.3.0 mcp-server-git==2026.10.19 mcp-server-fetch==2026.10.24 mcp-server-time==2026.10.19
# mcp-server-sqlite 2025.4.25 does not start with mcp 2.x (Server.list_resources is gone).
[[ -x venv-sqlite/bin/python ]] || python3 -m venv venv-sqlite
venv-sqlite/bin/pip install -q mcp==1.30.0 mcp-server-sqlite==2025.4.25

# --- snapshot -------------------------------------------------------------------------
nm=$work/node_modules
m=$nm/@modelcontextprotocol
mkdir -p "$work/fsroot"
echo '{"access_token":"dummy","refresh_token":"dummy","token_type":"Bearer"}' >"$work/gdrive-creds.json"
failed=0
snap() { # NAME COMMAND ARG...
  local name=$1
  shift
  if ! "$TOOLBIND" mcp snapshot --sandbox off --name "$name" --out-dir "$OUT_DIR" -- "$@" </dev/null; then
    echo "snapshot $name failed" >&2
    failed=1
  fi
}
snap fs node "$m/server-filesystem/dist/index.js" "$work/fsroot"
snap memory env MEMORY_FILE_PATH="$work/memory.json" node "$m/server-memory/dist/index.js"
snap everything node "$m/server-everything/dist/index.js"
snap thinking node "$m/server-sequential-thinking/dist/index.js"
snap github env GITHUB_PERSONAL_ACCESS_TOKEN=dummy node "$m/server-github/dist/index.js"
snap gitlab env GITLAB_PERSONAL_ACCESS_TOKEN=dummy GITLAB_API_URL=https://gitlab.example.com/api/v4 node "$m/server-gitlab/dist/index.js"
snap slack env SLACK_BOT_TOKEN=xoxb-dummy SLACK_TEAM_ID=T00000000 node "$m/server-slack/dist/index.js"
snap puppeteer node "$m/server-puppeteer/dist/index.js"
snap maps env GOOGLE_MAPS_API_KEY=dummy node "$m/server-google-maps/dist/index.js"
snap brave env BRAVE_API_KEY=dummy node "$m/server-brave-search/dist/index.js"
snap postgres node "$m/server-postgres/dist/index.js" postgresql://localhost/dummy
snap gdrive env GDRIVE_CREDENTIALS_PATH="$work/gdrive-creds.json" node "$m/server-gdrive/dist/index.js"
snap everart env EVERART_API_KEY=dummy node "$m/server-everart/dist/index.js"
snap playwright node "$nm/@playwright/mcp/cli.js"
snap chrome-devtools node "$nm/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"
snap notion env NOTION_TOKEN=dummy node "$nm/@notionhq/notion-mcp-server/bin/cli.mjs"
snap desktop-commander node "$nm/@wonderwhy-er/desktop-commander/dist/index.js"
snap kubernetes node "$nm/mcp-server-kubernetes/dist/index.js"
snap context7 node "$nm/@upstash/context7-mcp/dist/index.js"
snap firecrawl env FIRECRAWL_API_KEY=dummy node "$nm/firecrawl-mcp/dist/index.js"
snap tavily env TAVILY_API_KEY=dummy node "$nm/tavily-mcp/build/index.js"
snap exa env EXA_API_KEY=dummy node "$nm/exa-mcp-server/dist/stdio.cjs"
snap sentry env SENTRY_ACCESS_TOKEN=dummy node "$nm/@sentry/mcp-server/dist/index.js"
snap git "$work/venv/bin/mcp-server-git"
snap fetch "$work/venv/bin/mcp-server-fetch"
snap time "$work/venv/bin/mcp-server-time" --local-timezone UTC
snap sqlite "$work/venv-sqlite/bin/mcp-server-sqlite" --db-path "$work/dummy.db"
exit $failed
