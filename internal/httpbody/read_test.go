package httpbody

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRead: every way a body may be framed gets the same answers — the
// bytes, 413 past the cap, 400 for a body shorter than it declared —
// whether it is read into a buffer of its declared size (small) or
// grown as it arrives (large, or of unknown length).
func TestRead(t *testing.T) {
	const max = 16 << 10
	small := strings.Repeat("s", 200)
	large := strings.Repeat("l", exactBody+1000)
	for _, tc := range []struct {
		name   string
		body   io.Reader
		length int64 // -1: unknown (chunked)
		want   string
		status int
	}{
		{"small", strings.NewReader(small), int64(len(small)), small, 0},
		{"empty", strings.NewReader(""), 0, "", 0},
		{"large", strings.NewReader(large), int64(len(large)), large, 0},
		{"unknown length", strings.NewReader(large), -1, large, 0},
		{"declared past the cap", strings.NewReader(strings.Repeat("x", max+1)), max + 1, "", http.StatusRequestEntityTooLarge},
		{"unknown length past the cap", strings.NewReader(strings.Repeat("x", max+1)), -1, "", http.StatusRequestEntityTooLarge},
		{"small, shorter than declared", io.LimitReader(strings.NewReader(small), 100), int64(len(small)), "", http.StatusBadRequest},
		{"large, shorter than declared", io.LimitReader(strings.NewReader(large), 100), int64(len(large)), "", http.StatusBadRequest},
		{"longer than declared (a wrapper's stale length)", strings.NewReader(small + "tail"), int64(len(small)), small + "tail", 0},
		{"longer than declared, past the cap", strings.NewReader(small + strings.Repeat("x", max)), int64(len(small)), "", http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			r.Body, r.ContentLength = io.NopCloser(&shortAware{r: tc.body, n: tc.length}), tc.length
			got, status, e := Read(httptest.NewRecorder(), r, max, 0)
			if status != tc.status {
				t.Fatalf("status %d (%v), want %d", status, e, tc.status)
			}
			if tc.status == 0 && !bytes.Equal(got, []byte(tc.want)) {
				t.Fatalf("read %d bytes, want %d", len(got), len(tc.want))
			}
			if tc.status != 0 && e == nil {
				t.Fatal("a refused body without a JSON-RPC error")
			}
		})
	}
}

// TestReadExactAtCap: a small body declared at exactly the cap that
// goes on past its length is refused, not read one byte over the cap.
func TestReadExactAtCap(t *testing.T) {
	const max = 300
	for _, tc := range []struct {
		body   string
		status int
	}{{strings.Repeat("x", max), 0}, {strings.Repeat("x", max+1), http.StatusRequestEntityTooLarge}} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Body, r.ContentLength = io.NopCloser(strings.NewReader(tc.body)), max
		got, status, _ := Read(httptest.NewRecorder(), r, max, 0)
		if status != tc.status || (status == 0 && len(got) != max) {
			t.Fatalf("%d bytes declared %d: status %d, %d read", len(tc.body), max, status, len(got))
		}
	}
}

// shortAware reads r as net/http's body would: a body that ends before
// its declared length n fails with io.ErrUnexpectedEOF.
type shortAware struct {
	r    io.Reader
	n    int64
	read int64
}

func (s *shortAware) Read(p []byte) (int, error) {
	k, err := s.r.Read(p)
	s.read += int64(k)
	if err == io.EOF && s.n >= 0 && s.read < s.n {
		err = io.ErrUnexpectedEOF
	}
	return k, err
}

// deadlineLog is a ResponseWriter that logs the read deadlines set on it
// and passes them on to the writer beneath when that takes them.
type deadlineLog struct {
	http.ResponseWriter
	set []time.Time
}

func (d *deadlineLog) SetReadDeadline(t time.Time) error {
	d.set = append(d.set, t)
	if rc, ok := d.ResponseWriter.(interface{ SetReadDeadline(time.Time) error }); ok {
		return rc.SetReadDeadline(t)
	}
	return nil
}

// cleared reports whether the last deadline set was none.
func (d *deadlineLog) cleared() bool { return len(d.set) > 0 && d.set[len(d.set)-1].IsZero() }

// TestClearsItself: Read leaves the deadline's clearing to net/http only
// for net/http's own HTTP/1 body, served by its server and read to its
// end by Read: declared or chunked. An empty body, one a middleware put
// in its place or read to its end before, and a request that did not
// come from net/http's server are cleared by Read itself. (That an
// answer then outlives the bound is TestHTTPBodyReadTimeoutSparesLongAnswers,
// in server/streamhttp.)
func TestClearsItself(t *testing.T) {
	type seen struct {
		cleared bool
		status  int
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("X-Middleware") {
		case "copy":
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
		case "drain":
			_, _ = io.Copy(io.Discard, r.Body)
		}
		d := &deadlineLog{ResponseWriter: w}
		_, status, _ := Read(d, r, 1<<10, DefaultReadTimeout)
		got <- seen{d.cleared(), status}
	}))
	defer srv.Close()
	chunked := func() io.Reader { return io.MultiReader(strings.NewReader(`{"a":`), strings.NewReader(`1}`)) }
	for _, c := range []struct {
		name       string
		body       io.Reader
		middleware string
		cleared    bool
	}{
		{"declared length", strings.NewReader(`{"a":1}`), "", false},
		{"chunked", chunked(), "", false},
		{"empty", strings.NewReader(""), "", true},
		{"a middleware's copy", strings.NewReader(`{"a":1}`), "copy", true},
		{"read to its end by a middleware", chunked(), "drain", true},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, c.body)
		req.Header.Set("X-Middleware", c.middleware)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if s := <-got; s.cleared != c.cleared || s.status != 0 {
			t.Errorf("%s: Read cleared the deadline: %v (status %d), want %v", c.name, s.cleared, s.status, c.cleared)
		}
	}
	// A request read by http.ReadRequest (a server of one's own) has
	// net/http's body type without its server's end hook.
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{\"a\":1}\r\n0\r\n\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	d := &deadlineLog{ResponseWriter: httptest.NewRecorder()}
	if body, status, _ := Read(d, r, 1<<10, DefaultReadTimeout); status != 0 || string(body) != `{"a":1}` || !d.cleared() {
		t.Errorf("ReadRequest's request: %q, status %d, deadlines %v: want it read and the deadline cleared", body, status, d.set)
	}
}
