// Package memory provides an in-process pair of connected transport.Conns,
// for tests and for embedding a server and a client in one program.
//
// It imports only the transport package.
package memory
