package mcp

import "errors"

// ErrResourceNotFound says a resources/read URI names no resource. A
// server's resource handler returns it (wrapped or not) and the server
// answers with the era's not-found error (-32002 on legacy sessions,
// -32602 from 2026-07-28 on, SEP-2164); the client's ReadResource returns
// an error that matches it with errors.Is for either code.
var ErrResourceNotFound = errors.New("mcp: resource not found")

// JSON-RPC 2.0 error codes, used by every revision.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// MCP error codes. The JSON-RPC error type itself lives in package jsonrpc.
const (
	// CodeResourceNotFound is the 2025 code for resources/read of an unknown
	// resource. 2026-07-28 retired it in favor of CodeInvalidParams, but
	// clients still accept it from older servers.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired (2025-11-25 only) says the request needs the
	// URL elicitations listed in URLElicitationRequiredData first.
	CodeURLElicitationRequired = -32042
	// CodeHeaderMismatch (2026-07-28) says an HTTP request header disagrees
	// with the body or is missing; it has no defined data.
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability (2026-07-28) says the request needs a
	// client capability it did not declare; data is MissingCapabilityData.
	CodeMissingRequiredClientCapability = -32021
	// CodeUnsupportedProtocolVersion (2026-07-28) says the server does not
	// serve the requested revision; data is UnsupportedProtocolVersionData.
	CodeUnsupportedProtocolVersion = -32022
)

// UnsupportedProtocolVersionData is the error data of CodeUnsupportedProtocolVersion.
type UnsupportedProtocolVersionData struct {
	// Supported lists the revisions the server serves.
	Supported []string `json:"supported"`
	// Requested echoes the revision the client asked for.
	Requested string `json:"requested"`
}

// MissingCapabilityData is the error data of CodeMissingRequiredClientCapability.
type MissingCapabilityData struct {
	// RequiredCapabilities holds the capabilities the request needs.
	RequiredCapabilities ClientCapabilities `json:"requiredCapabilities"`
}

// URLElicitationRequiredData is the error data of CodeURLElicitationRequired.
type URLElicitationRequiredData struct {
	// Elicitations lists URL-mode elicitations, each with an ElicitationID.
	Elicitations []ElicitParams `json:"elicitations"`
}
