package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// readBody reads a POST body within MaxBodyBytes and BodyReadTimeout,
// answering 413, 408 or 400 itself when it cannot (ok false).
//
// The time bound is a read deadline (http.ResponseController), set for
// the body and cleared once it is read whole, so that an answer may
// stream for as long as it needs. (net/http's HTTP/1 server clears the
// connection's deadline itself when the body ends, before its background
// read; an HTTP/2 stream keeps a timer of its own.) A ResponseWriter
// without deadlines gets a timer that closes the body instead.
func (h *HTTPHandler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	var fb *bodyTimer
	deadline := false
	if d := h.bodyTimeout(r); d > 0 {
		if http.NewResponseController(w).SetReadDeadline(time.Now().Add(d)) == nil {
			deadline = true
		} else {
			fb = startBodyTimer(r.Body, d)
			defer fb.stop()
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err == nil {
		if deadline {
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
		return body, true
	}
	// On failure the deadline stays: the connection is not reused, and
	// net/http must not wait for the rest of a stalled body when it
	// closes the request.
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, mcp.ID{}, mcp.CodeInvalidRequest, "Request Entity Too Large")
	case errors.Is(err, os.ErrDeadlineExceeded) || fb.fired():
		// RFC 9110 §15.5.9: the server closes the connection; what the
		// client sends after is not read.
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, mcp.ID{}, mcp.CodeInvalidRequest, "Request Timeout: the body did not arrive in time")
	default:
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeParseError, "Parse error: reading the body failed")
	}
	return nil, false
}

// bodyTimeout is BodyReadTimeout, or 0 (no deadline of the handler's
// own) when the http.Server sets a ReadTimeout: that one already bounds
// the whole request from its first byte, and a deadline set now, once
// the headers are in, could only end later than it — the handler must
// not loosen a bound its server sets. A body that outlasts the server's
// ReadTimeout still gets 408 (the read fails with a deadline error).
func (h *HTTPHandler) bodyTimeout(r *http.Request) time.Duration {
	d := h.opts.BodyReadTimeout
	if d <= 0 {
		return 0
	}
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.ReadTimeout > 0 {
		return 0
	}
	return d
}

// bodyTimer closes a request body when the read bound is up, for
// ResponseWriters that support no read deadline. The timer's goroutine
// ends when Close returns.
type bodyTimer struct {
	t    *time.Timer
	done atomic.Bool
}

func startBodyTimer(body io.Closer, d time.Duration) *bodyTimer {
	fb := &bodyTimer{}
	fb.t = time.AfterFunc(d, func() {
		fb.done.Store(true)
		_ = body.Close()
	})
	return fb
}

func (fb *bodyTimer) stop() { fb.t.Stop() }

// fired reports whether the bound was reached (false for nil).
func (fb *bodyTimer) fired() bool { return fb != nil && fb.done.Load() }
