package server

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// ElicitationComplete tells the client that the out-of-band interaction
// of a URL-mode elicitation it started has finished
// (notifications/elicitation/complete, 2025-11-25). It is a notification,
// so it may be sent after the originating request has been answered; it
// needs a client that declared URL-mode elicitation.
func (ss *Session) ElicitationComplete(ctx context.Context, elicitationID string) error {
	caps := ss.ClientCapabilities()
	if !caps.Elicitation.SupportsURL() {
		return fmt.Errorf("%w: elicitation.url", ErrClientCapability)
	}
	return ss.notify(ctx, mcp.NotificationElicitationComplete, &mcp.ElicitationCompleteParams{ElicitationID: elicitationID})
}

// URLElicitationRequired returns the -32042 error a handler returns when
// its request cannot go on until the user completes the given URL-mode
// elicitations (2025-11-25 only; 2026-07-28 uses input-required results
// instead). Elicitations without an id get a fresh random one; the mode
// is set to "url".
func URLElicitationRequired(message string, elicitations ...mcp.ElicitParams) *jsonrpc.Error {
	data := mcp.URLElicitationRequiredData{Elicitations: make([]mcp.ElicitParams, len(elicitations))}
	for i, e := range elicitations {
		e.Mode = mcp.ElicitModeURL
		if e.ElicitationID == "" {
			e.ElicitationID = rand.Text()
		}
		data.Elicitations[i] = e
	}
	if message == "" {
		message = "This request requires more information."
	}
	return jsonrpc.NewError(mcp.CodeURLElicitationRequired, message).WithData(data)
}
