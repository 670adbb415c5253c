package clients

import (
	"bytes"
	"io"
	"net/http"
)

// InMemory returns a RoundTripper that serves every request with h in
// the caller's goroutine, without a network: what it costs is the same
// for every client, so the allocations and CPU per call that differ are
// the clients' own. Answers are buffered whole (h must not stream).
func InMemory(h http.Handler) http.RoundTripper { return memory{h} }

type memory struct{ h http.Handler }

func (m memory) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil {
		req.Body = http.NoBody
	}
	rec := &memResponse{header: make(http.Header, 2)}
	m.h.ServeHTTP(rec, req)
	req.Body.Close()
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status:        http.StatusText(rec.status),
		StatusCode:    rec.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(bytes.NewReader(rec.body)),
		ContentLength: int64(len(rec.body)),
		Request:       req,
	}, nil
}

type memResponse struct {
	header http.Header
	status int
	body   []byte
}

func (r *memResponse) Header() http.Header { return r.header }

func (r *memResponse) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *memResponse) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	r.body = append(r.body, p...)
	return len(p), nil
}
