// Package mcptest helps you test your own MCP servers and clients: it
// connects a server to a client in memory, in the era you choose, calls
// tools with typed results, answers the server's input requests
// (elicitation, sampling, roots) from a script, and checks every message
// on the wire against the official schema of the revision in use.
//
// A test of a server, in both eras at once:
//
//	func TestGreet(t *testing.T) {
//		for _, era := range mcptest.Eras() {
//			t.Run(era.String(), func(t *testing.T) {
//				p := mcptest.NewPair(t, newServer(), &mcptest.Options{Era: era})
//				out := mcptest.CallTool[greetOut](t, p, "greet", greetIn{Name: "Ada"})
//				if out.Greeting != "Hello, Ada!" {
//					t.Errorf("greeting = %q", out.Greeting)
//				}
//			})
//		}
//	}
//
// NewPair serves the server on one end of an in-memory connection
// (transport/memory) and connects a client.Client to the other, pinned to
// the era's revision: mcp.LatestLegacy (initialize, a session) for
// client.EraLegacy, mcp.Version20260728 (stateless requests carrying the
// envelope) for client.EraModern. Everything it starts ends in
// t.Cleanup: the client is closed, the server's session ends, and the
// cleanup waits for both, so a test using goleak sees no goroutine left.
//
// Input requests. A handler written in the multi round-trip style
// (server.NeedInput, server.Ask) asks its questions the same way in both
// eras; a Script answers them in the order they are asked, records what
// was asked, and fails the test when a question comes that it has no
// answer for. Options.Script declares the matching client capabilities
// (elicitation, sampling, roots) at connection time, as a real client
// would.
//
// Progress. CallTool, CallToolResult and ToolError send a progress
// token with each call, as a client that shows progress does, and fail
// the test when the call's progress steps do not increase (a step sent
// twice, as a handler that runs again after a round of input could);
// Pair.Progress returns the notifications the last call received.
//
// Wire checks. With $MCPKIT_SCHEMA_DIR naming a directory that holds
// <revision>/schema.json (the schemas of the MCP specification
// repository, schema/<revision>/schema.json), every message either side
// sends is validated against its revision, responses against the request
// they answer; a message that does not conform fails the test, quoting
// the message. Without the variable the checks stand down with one line
// in the test's log and the test runs on; with $MCPKIT_REQUIRE_SCHEMAS=1
// (for CI) their absence fails the test instead. Options.NoWireCheck
// turns them off for a test that sends malformed messages on purpose.
//
// mcptest is for tests: it imports package testing, and nothing outside
// a _test.go file should import it.
package mcptest
