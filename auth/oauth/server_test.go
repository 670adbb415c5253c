package oauth

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func readAllAndRestore(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}
