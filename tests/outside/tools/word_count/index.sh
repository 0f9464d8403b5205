#!/usr/bin/env bash
# Params arrive as one JSON object on stdin.
set -euo pipefail
params=$(cat)
text=$(printf '%s' "$params" | sed -n 's/.*"text":"\([^"]*\)".*/\1/p')
echo "$(printf '%s\n' "$text" | wc -w) words (bash)"
