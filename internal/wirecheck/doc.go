// Package wirecheck is test support: it validates JSON-RPC messages against
// the official MCP JSON schemas, so that tests of the transports, the client
// and the server can assert that what mcpkit puts on the wire conforms to
// each protocol revision.
//
// It owns locating the schemas ($MCPKIT_SCHEMA_DIR/<revision>/schema.json;
// they are not in the repository, and nothing else is searched), deciding
// what a test does without them, compiling each revision once per
// process, mapping methods to the schema
// definitions that describe their requests, notifications and results, and
// the Observe helper that tracks request ids on a live connection.
//
// It must import no mcpkit package other than internal/jsonschema (which
// compiles and validates; the schemas are never loaded from the network),
// and no package outside the module's go.mod. It may import "testing", and
// no production package may import it; mcptest, the test support of
// mcpkit's users, checks its pairs' wire with it.
//
// Without $MCPKIT_SCHEMA_DIR only the schema checks stand down, each with
// one line naming the variable: For logs it and returns a nil Checker,
// whose methods check nothing, so the rest of the test still runs; Need
// and Dir, for tests whose subject is the schema, skip the test. With
// $MCPKIT_REQUIRE_SCHEMAS=1 (CI) each of them fails the test instead, and
// a variable that names no directory, or a revision that is missing or
// does not compile, always fails.
//
// Typical use in a test:
//
//	c := wirecheck.For(t, "2025-11-25") // nil without the schemas
//	if err := c.Check(msg); err != nil { t.Error(err) }
//	if err := c.CheckResult("tools/call", resp); err != nil { t.Error(err) }
//
//	observe := c.Observe(t) // attach to a transport: every message is checked
//	observe(wirecheck.ClientToServer, req)
//	observe(wirecheck.ServerToClient, resp) // validated as the result of req
//
// Methods are looked up in the revision's own definitions: the request or
// notification definition is the one whose "method" property has that
// const; it is on the wire when it is a member of ClientRequest,
// ServerRequest, ClientNotification or ServerNotification. Result
// definitions come from the <Name>ResultResponse (2026-07-28) or
// <Name>Result definitions of a <Name>Request, and from a small table for
// methods whose result is EmptyResult (ping, logging/setLevel,
// resources/subscribe, resources/unsubscribe). A method the revision does
// not define is an error, never a skip: it is a finding.
package wirecheck
