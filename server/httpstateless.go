package server

import (
	"context"
	"net/http"
	"runtime/debug"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// postStateless serves one legacy POST without a session: initialize is
// answered (and creates nothing), other requests run against the
// registry with the capabilities of a client that declared none.
func (h *HTTPHandler) postStateless(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, wp *wireParams) {
	if !msg.IsRequest() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	version := r.Header.Get(headerProtocolVersion)
	if version == "" {
		version = mcp.Version20250326 // the spec's assumption when the header is absent
	}
	if !isLegacyVersion(version) {
		writeError(w, http.StatusBadRequest, msg.ID, mcp.CodeInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version "+version)
		return
	}
	st := newStream(h, nil, msg.ID)
	ctx, cancel := context.WithCancel(r.Context())
	h.serveRequest(w, r, st, cancel, func() {
		result, err := h.srv.serveOne(ctx, version, msg, wp, streamOutbound{st})
		var out []byte
		if err != nil {
			out = jsonrpc.EncodeError(msg.ID, toRPCError(err))
		} else if out, err = jsonrpc.EncodeResult(msg.ID, result); err != nil {
			out = jsonrpc.EncodeError(msg.ID, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the result could not be encoded"))
		}
		st.push(out, true)
	})
}

// serveOne answers one session-less request, recovering a handler panic.
func (s *Server) serveOne(ctx context.Context, version string, msg *jsonrpc.Message, wp *wireParams, out outbound) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("mcp: handler panic", "method", msg.Method, "panic", p, "stack", string(debug.Stack()))
			result, err = nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: handler for %s panicked", msg.Method)
		}
	}()
	if err := paramsObject(msg.Params); err != nil {
		return nil, err
	}
	switch msg.Method {
	case mcp.MethodInitialize:
		var p mcp.InitializeParams
		if err := decodeParams(msg.Params, &p); err != nil {
			return nil, err
		}
		return s.initializeResult(p.ProtocolVersion), nil
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, mcp.MethodLoggingSetLevel:
		// These keep per-client state, which a session-less server has
		// nowhere to keep.
		return nil, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: %s (this server has no sessions)", msg.Method)
	}
	req := &Request{srv: s, version: version, caps: &mcp.ClientCapabilities{}, out: out, era: eraLegacy}
	defer req.end()
	return s.dispatch(ctx, req, msg.Method, wp)
}

func toRPCError(err error) *jsonrpc.Error {
	if e, ok := jsonrpc.AsError(err); ok {
		return e
	}
	return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %s", shortErr(err))
}

// streamOutbound carries a session-less request's notifications on its
// own response stream; it cannot carry requests, whose answers would
// have nowhere to go.
type streamOutbound struct{ st *stream }

func (o streamOutbound) call(context.Context, string, any, any) error { return ErrNoSession }

func (o streamOutbound) notify(_ context.Context, method string, params any) error {
	msg, err := jsonrpc.EncodeRequest(mcp.ID{}, method, params)
	if err != nil {
		return err
	}
	o.st.push(msg, false)
	return nil
}
