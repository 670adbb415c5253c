// Package e2e holds mcpkit's end-to-end tests: the real server and client
// against each other in memory, over a stdio child process and over
// Streamable HTTP, in both protocol eras, with every message checked
// against the official schema. It has no API; it may import anything in
// the module.
package e2e
