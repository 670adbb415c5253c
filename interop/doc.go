// Package interop holds tests of mcpkit against other implementations,
// in a module of its own so that the core go.mod stays small:
//
//   - go-sdk (github.com/modelcontextprotocol/go-sdk): its server and its
//     client of the deprecated HTTP+SSE transport (2024-11-05) against
//     mcpkit's client fallback and mcpkit's LegacySSE handler;
//   - the reference servers from npm (@modelcontextprotocol/server-
//     everything and @modelcontextprotocol/server-filesystem), run with
//     the Node 22 of the conformance suite, over stdio and Streamable
//     HTTP, driven by mcpkit's client and the mcpkit command;
//   - the gateway (package gateway), served on Streamable HTTP over
//     loopback, in front of real upstreams and driven by mcpkit's client
//     in both eras (2026-07-28 and 2025-11-25): the everything server over
//     stdio (a legacy-only upstream: tools under the prefix, echo,
//     progress, its elicitation and sampling requests reaching the client
//     as input-required results or real requests, log messages sent
//     during a call, a resource, a prompt); the filesystem server over
//     stdio with the upstream's Roots; go-sdk's 2024-11-05 HTTP+SSE
//     server by URL alone (elicitation, progress, logs); two upstreams at
//     once with their prefixes and merged capabilities; and an upstream
//     whose process the test kills, whose tools leave and come back with
//     notifications/tools/list_changed (gateway_*_test.go);
//   - other SDKs' clients through the gateway to the legacy-only
//     everything server, each in both eras, the revision read off the
//     wire: go-sdk, mcp-go, and the TypeScript SDK's v2 client
//     (@modelcontextprotocol/client, driven by testdata/tsclient.mjs) —
//     tools, a prefixed call, and the upstream's elicitation answered by
//     the client's handler;
//   - the official MCP Inspector (@modelcontextprotocol/inspector, its
//     CLI mode) against `mcpkit serve` over stdio and Streamable HTTP:
//     initialize, tools/list, tools/call (a result, a tool error and the
//     MCP App probe), resources/list, resources/read, prompts/list and
//     prompts/get, each checked in the JSON it prints
//     (inspector_test.go);
//   - `mcpkit app` in headless Chromium (Debian's chromium, driven over
//     the DevTools protocol by chromedp): the demo's dice view and the
//     official example app server's view (@modelcontextprotocol/server-
//     basic-vanillajs) show the host's tool result and call their tool
//     through the official SDK's AppBridge; a view's CSP blocks an
//     undeclared origin and admits a declared one, and only a view that
//     asks for the camera gets it (apps_*_test.go, browser_test.go). They
//     skip without chromium unless MCPKIT_REQUIRE_BROWSER=1;
//   - the Skills extension (SEP-2640) across SDKs, both eras
//     (skills_test.go): mcpkit's ext/skills client against the TypeScript
//     SDK's skills server (testdata/tsskills_server.mjs, over stdio), and
//     the TypeScript SDK's SkillsClient (testdata/tsskills_client.mjs)
//     against an mcpkit skills server over Streamable HTTP: listing,
//     skills/get, verified reads, a directory read, materialising; and
//     mcpkit skills (list, show, --fetch) against the TypeScript server;
//   - defects of the gateway those tests found, fixed, as regression
//     tests in gateway_issues_test.go: a legacy upstream's log messages
//     during a call, and tools/list with no upstream up.
//
// The npm peers are installed by peers/install.sh into a cache folder;
// the tests find them through MCPKIT_PEERS_DIR (scripts/test sets it) and
// skip, saying so, without it unless MCPKIT_REQUIRE_PEERS=1.
package interop
