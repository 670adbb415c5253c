// Command hello is a minimal mcpkit server on stdio (see main.go).
package main
