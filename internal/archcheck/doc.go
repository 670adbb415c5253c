// Package archcheck holds the test that keeps the layering of
// ARCHITECTURE.md true: it reads the table of packages and the mcpkit
// packages each may import, lists the real imports with go list, and
// fails on any import the table does not allow and on any package the
// table does not name. It has no code of its own and imports nothing.
package archcheck
