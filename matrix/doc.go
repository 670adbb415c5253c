// Package matrix is the combination matrix of mcpkit (issue 33,
// docs/design/testing.md): every capability of the SDK tried in every
// era, transport, topology and client that can carry it, each cell
// asserting what a user observes. It holds test files only and is its
// own module, so that its peers (go-sdk's client) stay out of the core
// go.mod; the core module never imports it. Run it with
// `cd matrix && go test -race -count=1 ./...`; the table of cells
// (passed, failed, excluded with their rule, known failures with their
// reason) is printed at the end.
package matrix
