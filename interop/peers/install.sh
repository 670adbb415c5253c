#!/usr/bin/env bash
# Installs the reference MCP servers the interop tests run, and the
# TypeScript SDK's client (v2, which speaks 2026-07-28 as well as the
# 2025 revisions) that they drive through the gateway, and its server
# (the Skills extension's server side, ext/skills), pinned, from
# the npm registry into a cache folder, once, beside the Node 22 runtime
# the conformance suite installs (conformance/install.sh, reused: the
# same cache, the same Node). Also the official MCP Inspector (its CLI
# mode drives `mcpkit serve`; it needs Node >= 22.19), the MCP Apps SDK
# (@modelcontextprotocol/ext-apps: `mcpkit app` loads its host side from
# here, see docs/design/apps-host.md) and the official basic MCP Apps
# example server, which the browser test renders. esbuild bundles the
# SDK's host side (app-bridge, with its @modelcontextprotocol/client,
# core and zod imports) into one ES module for the browser:
# $CACHE/app-bridge.js, which `mcpkit app --bridge` serves. Prints the
# cache folder, which the tests take from MCPKIT_PEERS_DIR.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${MCPKIT_PEERS_CACHE:-$ROOT/.cache/peers}"
EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
TS_CLIENT_VERSION=2.4.0
INSPECTOR_VERSION=2.12.0
EXT_APPS_VERSION=2.0.4
BASIC_APP_VERSION=2.0.3
ESBUILD_VERSION=0.28.2
TS_SERVER_VERSION=2.4.0
conformance="$("$ROOT/conformance/install.sh")"
node="$(ls "$conformance"/node_modules/node-linux-*/bin/node | head -1)"
mkdir -p "$CACHE"
cd "$CACHE"
stamp="everything@$EVERYTHING_VERSION+filesystem@$FILESYSTEM_VERSION+client@$TS_CLIENT_VERSION"
stamp="$stamp+inspector@$INSPECTOR_VERSION+ext-apps@$EXT_APPS_VERSION+basic-vanillajs@$BASIC_APP_VERSION"
stamp="$stamp+esbuild@$ESBUILD_VERSION+server@$TS_SERVER_VERSION"
if [ "$(cat .installed 2>/dev/null)" != "$stamp" ]; then
  [ -f package.json ] || printf '{ "name": "mcpkit-interop-peers", "private": true }\n' > package.json
  npm install --no-audit --no-fund --save-exact --loglevel=error \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" \
    "@modelcontextprotocol/client@$TS_CLIENT_VERSION" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
    "@modelcontextprotocol/ext-apps@$EXT_APPS_VERSION" \
    "@modelcontextprotocol/server-basic-vanillajs@$BASIC_APP_VERSION" \
    "@modelcontextprotocol/server@$TS_SERVER_VERSION" \
    "esbuild@$ESBUILD_VERSION" >&2
  node_modules/.bin/esbuild node_modules/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js \
    --bundle --format=esm --platform=browser --minify --log-level=warning --outfile=app-bridge.js >&2
  echo "$stamp" > .installed
fi
ln -sf "$node" "$CACHE/node"
echo "$CACHE"
