// Command mcpkit serves a demo MCP server and pokes at any MCP server, in
// either protocol era, over Streamable HTTP or stdio.
//
//	mcpkit serve --http 127.0.0.1:8080
//	mcpkit inspect http://127.0.0.1:8080/mcp
//	mcpkit call http://127.0.0.1:8080/mcp add a=2 b=40
//	mcpkit call add a=2 b=40 -- mcpkit serve --stdio
//	mcpkit gateway --http 127.0.0.1:8081 --prefix demo -- mcpkit serve --stdio
//	mcpkit gateway --config gateway.json
//	mcpkit app --bridge app-bridge.js -- mcpkit serve --stdio
//	mcpkit skills --fetch ./git-flow http://127.0.0.1:8080/mcp git-flow
//
// This package owns the command line only: argument parsing (the standard
// flag package, one FlagSet per subcommand), the demo server (serve.go),
// the gateway command and its JSON configuration file (gateway.go,
// gateway_config.go: the gateway package served on HTTP and/or stdio, auth
// in front, ratelimit as a server interceptor, /healthz),
// connecting to a target (target.go), OAuth login and the file-backed
// token store (oauth.go), answering the server's input requests on a
// terminal or from flags (input.go), printing results (commands.go), and
// the MCP Apps preview host (app.go, app_host.go, app_assets: a loopback
// page, a sandbox proxy on a second origin serving each view under its
// CSP, the official SDK's AppBridge loaded from --bridge;
// docs/design/apps-host.md), and the skills command (skills.go: list,
// show and fetch through ext/skills).
// It uses the SDK's public API only (client, server, mcp, transport/...,
// auth, auth/oauth, gateway, ratelimit, ext/apps, ext/skills); it is not
// imported by anything.
// Run "mcpkit help" for the usage text and the exit codes.
package main
