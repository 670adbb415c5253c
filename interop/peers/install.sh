#!/usr/bin/env bash
# Installs the reference MCP servers the interop tests run, and the
# TypeScript SDK's client (v2, which speaks 2026-07-28 as well as the
# 2025 revisions) that they drive through the gateway, and its server
# (the Skills extension's server side, ext/skills), pinned, from
# the npm registry into a cache folder, once, beside the Node 22 runtime
# the conformance suite installs (conformance/install.sh, reused: the
# same cache, the same Node). Prints the cache folder, which the tests
# take from MCPKIT_PEERS_DIR.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${MCPKIT_PEERS_CACHE:-$ROOT/.cache/peers}"
EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
TS_CLIENT_VERSION=2.4.0
TS_SERVER_VERSION=2.4.0
conformance="$("$ROOT/conformance/install.sh")"
node="$(ls "$conformance"/node_modules/node-linux-*/bin/node | head -1)"
mkdir -p "$CACHE"
cd "$CACHE"
stamp="everything@$EVERYTHING_VERSION+filesystem@$FILESYSTEM_VERSION+client@$TS_CLIENT_VERSION+server@$TS_SERVER_VERSION"
if [ "$(cat .installed 2>/dev/null)" != "$stamp" ]; then
  [ -f package.json ] || printf '{ "name": "mcpkit-interop-peers", "private": true }\n' > package.json
  npm install --no-audit --no-fund --save-exact --loglevel=error \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" \
    "@modelcontextprotocol/client@$TS_CLIENT_VERSION" \
    "@modelcontextprotocol/server@$TS_SERVER_VERSION" >&2
  echo "$stamp" > .installed
fi
ln -sf "$node" "$CACHE/node"
echo "$CACHE"
