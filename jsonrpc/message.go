package jsonrpc

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// Message is one decoded JSON-RPC 2.0 message. Exactly one shape holds:
//
//   - request: Method set, mcp.ID valid;
//   - notification: Method set, mcp.ID zero;
//   - response: Method empty, and either Result or Error set.
//
// Params, Result and Error.Data are kept as the raw JSON received, so each
// is decoded once, by whoever knows its type.
type Message struct {
	ID     mcp.ID
	Method string
	Params jsontext.Value
	Result jsontext.Value
	Error  *Error

	local error // set when this side ends a call itself (Conn.fail)
}

// IsRequest reports whether m is a request (it expects a response).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response (result or error).
func (m *Message) IsResponse() bool { return m.Method == "" }

// Limits bound what Decode accepts. The zero value applies the defaults.
type Limits struct {
	// MaxBytes is the largest message accepted, in bytes.
	// Default DefaultMaxMessageBytes.
	MaxBytes int
	// MaxDepth is the deepest nesting of arrays and objects accepted,
	// counting the message object itself as 1. Default DefaultMaxDepth.
	MaxDepth int
}

const (
	// DefaultMaxMessageBytes is the default cap on one message: 4 MiB.
	DefaultMaxMessageBytes = 4 << 20
	// DefaultMaxDepth is the default cap on JSON nesting depth.
	DefaultMaxDepth = 64
)

func (l Limits) maxBytes() int {
	if l.MaxBytes > 0 {
		return l.MaxBytes
	}
	return DefaultMaxMessageBytes
}

func (l Limits) maxDepth() int {
	if l.MaxDepth > 0 {
		return l.MaxDepth
	}
	return DefaultMaxDepth
}

// String renders a short description of m for logs.
func (m *Message) String() string {
	switch {
	case m.IsRequest():
		return fmt.Sprintf("request %s id=%s", m.Method, m.ID)
	case m.IsNotification():
		return "notification " + m.Method
	case m.Error != nil:
		return fmt.Sprintf("error response id=%s code=%d", m.ID, m.Error.Code)
	default:
		return fmt.Sprintf("response id=%s", m.ID)
	}
}
