package streamable

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// The HTTP side of a message: building a request, reading and judging an
// answer.

// newRequest builds a request to the endpoint with the transport's
// headers. The session headers are left out of an initialize request.
func (c *Conn) newRequest(ctx context.Context, method string, body []byte, accept string, sessionHeaders bool) (*http.Request, string, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint, rd)
	if err != nil {
		return nil, "", fmt.Errorf("streamable: %w", err)
	}
	for k, vs := range c.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil {
		req.Header["Content-Type"] = valueJSON
	}
	switch accept {
	case "":
	case acceptPOST:
		req.Header["Accept"] = valueAcceptPOST
	default:
		req.Header.Set("Accept", accept)
	}
	if !sessionHeaders {
		return req, "", nil
	}
	c.mu.Lock()
	session, version := c.session, c.version
	if session != "" && (c.sessionValue == nil || c.sessionValue[0] != session) {
		c.sessionValue = []string{session}
	}
	sessionValue := c.sessionValue
	c.mu.Unlock()
	if session != "" {
		req.Header[canonicalSessionID] = sessionValue
	}
	if version != "" {
		req.Header[canonicalProtocolVersion] = versionValue(version)
	}
	return req, session, nil
}

func init() {
	for _, v := range []string{mcp.Version20241105, mcp.Version20250326, mcp.Version20250618, mcp.Version20251125, mcp.Version20260728} {
		versionValues[v] = []string{v}
	}
}

// versionValue returns the MCP-Protocol-Version header's value for v:
// shared for the revisions mcp names, a new one for any other.
func versionValue(v string) []string {
	if vs, ok := versionValues[v]; ok {
		return vs
	}
	return []string{v}
}

// statusError handles an HTTP error answer: a JSON-RPC error response to
// the request is queued; anything else is returned as a *StatusError.
func (c *Conn) statusError(ctx context.Context, resp *http.Response, m *jsonrpc.Message) error {
	se := &StatusError{Method: resp.Request.Method, StatusCode: resp.StatusCode, Status: resp.Status}
	if mediaType(resp.Header) != contentJSON {
		return se
	}
	data, err := readCapped(resp.Body, resp.ContentLength, maxErrorBody)
	if err != nil {
		return se
	}
	in, derr := wire.Decode(data, inLimits(maxErrorBody))
	if derr != nil || in.Error == nil {
		return se
	}
	if m != nil && m.IsRequest() && in.ID == m.ID {
		return c.enqueue(ctx, data)
	}
	se.RPC = in.Error
	return se
}

// requestError maps a failed request: ErrClosed after Close, the
// caller's context error, or the error itself.
func (c *Conn) requestError(ctx context.Context, method string, err error) error {
	if c.ctx.Err() != nil {
		return transport.ErrClosed
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("streamable: %s: %w", method, err)
}

// inLimits bound an incoming message: its size by the event cap; its
// depth is left to the jsonrpc layer, which applies its own limits.
func inLimits(maxBytes int) jsonrpc.Limits {
	return jsonrpc.Limits{MaxBytes: maxBytes, MaxDepth: math.MaxInt}
}

func mediaType(h http.Header) string {
	v := h.Get("Content-Type")
	if v == contentJSON || v == contentSSE {
		return v // the usual case, without parsing
	}
	mt, _, _ := mime.ParseMediaType(v)
	return mt
}

// readCapped reads a whole body of at most max bytes. size is its
// Content-Length (-1: unknown): a known size within max is read in one
// allocation.
func readCapped(r io.Reader, size int64, max int) ([]byte, error) {
	if size >= 0 && size <= int64(max) {
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, err
		}
		return data, nil
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > max {
		return nil, fmt.Errorf("%w: a JSON body over %s bytes", ErrEventTooLarge, strconv.Itoa(max))
	}
	return data, nil
}

// drainClose reads a little of what is left, so that the connection can
// be reused, and closes the body.
func drainClose(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	_ = body.Close()
}
