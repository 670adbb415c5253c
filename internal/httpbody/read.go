package httpbody

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// The defaults of both readers: server/streamhttp's Options and auth's
// Options name them (streamhttp.DefaultMaxBodyBytes,
// streamhttp.DefaultBodyReadTimeout), so that the middleware in front of
// a handler refuses exactly the bodies the handler would.
const (
	DefaultMaxBytes    = 4 << 20
	DefaultReadTimeout = 30 * time.Second
)

// Read reads r's body, at most max bytes, within timeout (0 or less: no
// bound of its own). On failure it returns the HTTP status to answer
// with and its JSON-RPC error: 413, 408 (with Connection: close set on w:
// RFC 9110 §15.5.9, what the client sends after is not read) or 400.
//
// The time bound is a read deadline (http.ResponseController), set for
// the body and cleared once it is read whole, so that an answer may
// stream for as long as it needs. (net/http's HTTP/1 server clears the
// connection's deadline itself when its body ends, before its background
// read, and then Read leaves it be: clearsItself. An HTTP/2 stream keeps
// a timer of its own.) A ResponseWriter
// without deadlines gets a timer that closes the body instead. When the
// http.Server sets a ReadTimeout no deadline is set: the server's already
// bounds the whole request from its first byte, and one set now, once
// the headers are in, could only end later — a reader must not loosen a
// bound its server sets. A body that outlasts the server's ReadTimeout
// still gets 408 (the read fails with a deadline error).
func Read(w http.ResponseWriter, r *http.Request, max int64, timeout time.Duration) ([]byte, int, *jsonrpc.Error) {
	srv, served := r.Context().Value(http.ServerContextKey).(*http.Server)
	if served && srv.ReadTimeout > 0 {
		timeout = 0
	}
	var fb *bodyTimer
	var rc readDeadliner
	if timeout > 0 {
		rc = deadlinerOf(w)
		if rc.SetReadDeadline(time.Now().Add(timeout)) != nil {
			rc = nil
			fb = startBodyTimer(r.Body, timeout)
			defer fb.stop()
		}
	}
	var body []byte
	var err error
	if n := r.ContentLength; n >= 0 && n <= max && n <= exactBody {
		// A small declared length: one buffer of exactly that size
		// (net/http's body ends there; a shorter one is
		// io.ErrUnexpectedEOF), not ReadAll's growing copies. Larger
		// bodies grow as they arrive, so that a client declaring a big
		// length and sending nothing costs no more than its bytes.
		body = make([]byte, n, n+1)
		if _, err = io.ReadFull(r.Body, body); err == nil {
			// net/http's body ends at its length: this read (into the
			// spare byte) returns io.EOF at once. A body of a wrapper
			// that kept a stale length (a decompressor) goes on: read it
			// whole, capped.
			if k, _ := r.Body.Read(body[n : n+1]); k > 0 && n >= max {
				err = &http.MaxBytesError{Limit: max}
			} else if k > 0 {
				var rest []byte
				rest, err = io.ReadAll(http.MaxBytesReader(w, r.Body, max-n-1))
				body = append(body[:n+1], rest...)
			}
		}
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	}
	if err == nil {
		if rc != nil && !(served && clearsItself(r, len(body))) {
			_ = rc.SetReadDeadline(time.Time{})
		}
		return body, 0, nil
	}
	// On failure the deadline stays: the connection is not reused, and
	// net/http must not wait for the rest of a stalled body when it
	// closes the request.
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, jsonrpc.NewError(mcp.CodeInvalidRequest, "Request Entity Too Large")
	case errors.Is(err, os.ErrDeadlineExceeded) || fb.fired():
		w.Header().Set("Connection", "close")
		return nil, http.StatusRequestTimeout, jsonrpc.NewError(mcp.CodeInvalidRequest, "Request Timeout: the body did not arrive in time")
	}
	return nil, http.StatusBadRequest, jsonrpc.NewError(mcp.CodeParseError, "Parse error: reading the body failed")
}

// clearsItself reports whether net/http has already cleared the read
// deadline set for this body, for a request its server serves (the
// caller checks http.ServerContextKey: a request from http.ReadRequest
// has the same body without the server's end hook): an HTTP/1 request
// whose body is still net/http's own, read to its end here (n > 0 bytes,
// so the end came after the deadline was set; a body a middleware read
// to its end and left in place ended before). At that end the server
// starts its background read of the connection, clearing the deadline
// first; a second clear would only cost a system timer update. (A
// pipelined request already waiting leaves the deadline in place, but
// then nothing reads the connection until the next request, whose header
// read sets a deadline of its own.) Any other body (a middleware's copy,
// a wrapper, an HTTP/2 stream's, an empty one) is cleared here.
func clearsItself(r *http.Request, n int) bool {
	t := serverBodyType()
	return n > 0 && r.ProtoMajor == 1 && t != nil && reflect.TypeOf(r.Body) == t
}

// serverBodyType is the type of net/http's own request body with a
// declared length, as its server hands it to a handler.
var serverBodyType = sync.OnceValue(func() reflect.Type {
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx")))
	if err != nil {
		return nil
	}
	return reflect.TypeOf(req.Body)
})

// exactBody is the largest declared length read into a buffer of its
// exact size before the bytes arrive: what net/http already holds per
// HTTP/1 connection (its 4 KiB read buffer; per HTTP/2 stream, bounded by
// the concurrent streams), so slow clients cannot make a server allocate
// more than they send beyond that.
const exactBody = 4 << 10

// readDeadliner sets the read deadline of a response's connection.
type readDeadliner interface{ SetReadDeadline(time.Time) error }

// deadlinerOf is w itself when it sets read deadlines (net/http's own
// writer, without the allocation of a ResponseController), or else a
// ResponseController, which finds the method through Unwrap.
func deadlinerOf(w http.ResponseWriter) readDeadliner {
	if d, ok := w.(readDeadliner); ok {
		return d
	}
	return http.NewResponseController(w)
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
