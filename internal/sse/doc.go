// Package sse reads and writes Server-Sent Events as the WHATWG HTML
// standard defines the text/event-stream format, for the Streamable HTTP
// transport on both sides.
//
// It must not import any other mcpkit package.
package sse
