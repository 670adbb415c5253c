// Package archcheck holds the test that keeps the layering of
// ARCHITECTURE.md true: it reads the table of packages and the mcpkit
// packages each may import, lists the real imports with go list, and
// fails on any import the table does not allow and on any package the
// table does not name, and on a row that names no package. Only the
// imports of non-test files count: a package's tests may drive it through
// its peers. The protocol layers (mcp, jsonrpc, transport, store, server
// and its seam) must not depend on net/http at all, even indirectly. The
// bench module is outside the table: it imports the peers it measures.
// It also holds the complexity check: no library function above
// cyclomatic complexity 30 (counted as gocyclo counts), hand-written
// decoders excepted, each with its reason, in complexity_test.go.
// The package has no code of its own and imports nothing.
package archcheck
