// Package apirecord records the exported API of a module's public
// packages, one text file per package under the module's api/ directory,
// and compares a module against its record. It is how a change to the
// public API cannot go unnoticed: the test of each module (core,
// otel, store/redis) fails, with the difference and the command that
// rewrites the record, when the API and the files disagree.
//
// A line of a record is one exported identifier with its signature, in
// the spirit of Go's own api/*.txt:
//
//	pkg github.com/mcpkit/mcpkit/server, func New(Implementation, *Options) *Server
//	pkg github.com/mcpkit/mcpkit/server, method (*Server) Err() error
//	pkg github.com/mcpkit/mcpkit/server, type Options struct, Name string
//
// The API is read from the compiler's export data (go list -export), so
// the record is exactly what importers see. A package is public when it
// is not package main and no element of its path is "internal".
//
// Rewrite every record (all three modules) from the repository root with
//
//	go run ./internal/apirecord/apirecord -w
//
// Its tests also keep CHANGELOG.md in the shape that message points to
// (an [Unreleased] release first, breaking sections first).
//
// It imports no mcpkit package.
package apirecord
