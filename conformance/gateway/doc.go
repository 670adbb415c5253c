// Command gateway is mcpkit's fixture for running the official MCP
// conformance suite's server scenarios through the gateway (see main.go):
// mcpkit's conformance server is its one upstream, without a prefix, and
// the suite speaks to the gateway as if it were that server. It uses only
// the public mcpkit API.
package main
