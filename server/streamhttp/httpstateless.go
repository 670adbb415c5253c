package streamhttp

import (
	"context"
	"net/http"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// postStateless serves one legacy POST without a session: initialize is
// answered (and creates nothing), other requests run against the
// registry with the capabilities of a client that declared none.
func (h *Handler) postStateless(w http.ResponseWriter, r *http.Request, call *seam.Call) {
	msg := call.Msg
	if !msg.IsRequest() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	version := headerValue(r.Header, headerProtocolVersion)
	if version == "" {
		version = mcp.Version20250326 // the spec's assumption when the header is absent
	}
	// initialize carries its revision in its body, where the server
	// negotiates it; the header is checked on the requests after it.
	if msg.Method != mcp.MethodInitialize && !h.p.ServesLegacy(version) {
		writeError(w, http.StatusBadRequest, msg.ID, mcp.CodeInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version "+version)
		return
	}
	is := h.newInlineServe(w, r, msg.ID, false)
	st := is.st
	h.serveRequest(is, func(ctx context.Context) {
		result, err := h.p.ServeStateless(ctx, version, *call, streamOutbound{st})
		if closing := shutdownAnswer(ctx, result, err); closing != nil {
			result, err = nil, closing
		}
		var out []byte
		if err != nil {
			out = wire.EncodeError(msg.ID, seam.ToRPCError(err))
			st.pushFinal(out, statusOf(err, 0))
			return
		}
		if out, err = wire.EncodeResult(msg.ID, result); err != nil {
			out = wire.EncodeError(msg.ID, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the result could not be encoded"))
		}
		st.push(out, true)
	})
}

// streamOutbound carries a session-less request's notifications on its
// own response stream; it cannot carry requests, whose answers would
// have nowhere to go.
type streamOutbound struct{ st *stream }

func (o streamOutbound) Call(context.Context, mcp.ID, string, any, any) error {
	return server.ErrNoSession
}

func (o streamOutbound) Notify(_ context.Context, _ mcp.ID, method string, params any) error {
	msg, err := wire.EncodeRequest(mcp.ID{}, method, params)
	if err != nil {
		return err
	}
	o.st.push(msg, false)
	return nil
}
