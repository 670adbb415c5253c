// Command client is mcpkit's fixture client for the official MCP
// conformance suite (see main.go). It uses only the public mcpkit API.
package main
