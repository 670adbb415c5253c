// Package interop holds tests of mcpkit against other implementations,
// in a module of its own so that the core go.mod stays small:
//
//   - go-sdk (github.com/modelcontextprotocol/go-sdk): its server and its
//     client of the deprecated HTTP+SSE transport (2024-11-05) against
//     mcpkit's client fallback and mcpkit's LegacySSE handler;
//   - the reference servers from npm (@modelcontextprotocol/server-
//     everything and @modelcontextprotocol/server-filesystem), run with
//     the Node 22 of the conformance suite, over stdio and Streamable
//     HTTP, driven by mcpkit's client and the mcpkit command.
//
// The npm peers are installed by peers/install.sh into a cache folder;
// the tests find them through MCPKIT_PEERS_DIR (scripts/test sets it) and
// skip, saying so, without it unless MCPKIT_REQUIRE_PEERS=1.
package interop
