#!/usr/bin/env bash
# Runs the tests with what they need: the reference MCP servers the MCP tests drive are installed
# first into .ci/mcp (from npm and PyPI, pinned; the first run needs those registries, later runs
# return at once and need no network). Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
for tool in rg python3 node npm; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]})) && [[ $(id -u) -ne 0 ]]; then
  echo "scripts/test.sh: the tests need ${missing[*]} (ripgrep, python3 with venv, Node.js with npm); install them and run it again" >&2
  exit 1
fi
bash .ci/mcp/install
exec cargo test "$@"
