package server

import (
	"context"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// postModern serves one 2026-07-28 POST: no session, the envelope and
// the SEP-2243 headers checked first, in the order the conformance suite
// expects, with the HTTP status the spec gives each error.
func (h *HTTPHandler) postModern(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, wp *wireParams, env *envelope, claimed bool, eerr *jsonrpc.Error) {
	if !msg.IsRequest() {
		// 2026 defines no client notification over HTTP (cancellation is
		// closing the stream) and clients send no responses: accept and
		// ignore.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	fail := func(status int, e *jsonrpc.Error) { writeRPCError(w, status, msg.ID, e) }
	header := r.Header.Get(headerProtocolVersion)
	switch {
	case !claimed && eerr == nil:
		fail(http.StatusBadRequest, invalidEnvelope("a 2026-07-28 request needs _meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities"))
		return
	case header == "":
		fail(http.StatusBadRequest, headerMismatch("the MCP-Protocol-Version header is missing"))
		return
	case env != nil && env.version != "" && header != env.version:
		fail(http.StatusBadRequest, headerMismatch("MCP-Protocol-Version header value '%s' does not match body value '%s'", header, env.version))
		return
	case eerr != nil:
		fail(http.StatusBadRequest, eerr)
		return
	}
	if e := checkStandardHeaders(r.Header, msg.Method, env); e != nil {
		fail(http.StatusBadRequest, e)
		return
	}
	st := newStream(h, nil, msg.ID)
	ctx, cancel := context.WithCancelCause(r.Context())
	stop := context.AfterFunc(h.closing, func() { cancel(ErrServerClosing) })
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned by this POST: waited for below
		defer wg.Done()
		defer func() {
			if p := recover(); p != nil {
				h.log.Error("mcp: handler panic", "method", msg.Method, "panic", p, "stack", string(debug.Stack()))
				st.pushFinal(jsonrpc.EncodeError(msg.ID, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: handler for %s panicked", msg.Method)), http.StatusOK)
			}
		}()
		result, err := h.srv.serveModern(ctx, env, msg, wp, streamOutbound{st}, r.Header)
		if err != nil {
			e := toRPCError(err)
			st.pushFinal(jsonrpc.EncodeError(msg.ID, e), modernErrorStatus(e))
			return
		}
		out, err := jsonrpc.EncodeResult(msg.ID, result)
		if err != nil {
			out = jsonrpc.EncodeError(msg.ID, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the result could not be encoded"))
		}
		st.push(out, true)
	}()
	st.serve(w, r, -1)
	// The client closing the stream is the cancellation of a 2026
	// request (nothing more may be sent for it).
	cancel(context.Canceled)
	stop()
	wg.Wait()
}

// modernErrorStatus is the HTTP status of a JSON-RPC error answer on the
// 2026 wire: the three MCP errors are 400, an unknown method 404, and
// errors of the method itself 200.
func modernErrorStatus(e *jsonrpc.Error) int {
	switch e.Code {
	case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case mcp.CodeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusOK
}
