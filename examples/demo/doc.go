// Command demo runs an mcpkit client against an mcpkit server it
// launches over stdio (see main.go).
package main
