package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

// BenchmarkHTTPToolsCallSession measures one legacy tools/call on a
// session over loopback HTTP, answered with JSON: the client's request
// and the reading of the answer (net/http, same process: their
// allocations are counted too), the handler's checks, the session
// lookup, routing, the tool, and the answer.
func BenchmarkHTTPToolsCallSession(b *testing.B) {
	s := New(nil)
	AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *CallToolRequest, in benchIn) (benchOut, error) {
		return benchOut{City: in.City, Forecast: []float64{21.5, 22, 19.25}, Summary: "mild"}, nil
	})
	h := NewHTTPHandler(s, nil)
	ts := httptest.NewServer(h)
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	client := &http.Client{Transport: tr}
	defer func() {
		h.Close()
		ts.Close()
		tr.CloseIdleConnections()
	}()
	post := func(sid string, body []byte) (*http.Response, []byte) {
		req, err := http.NewRequest(http.MethodPost, ts.URL, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", acceptBoth)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", mcp.Version20251125)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		return resp, out
	}
	resp, _ := post("", []byte(initBody(1, "{}")))
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp, _ := post(sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); resp.StatusCode != http.StatusAccepted {
		b.Fatalf("initialized: %d", resp.StatusCode)
	}
	// The request carries a progress token but the tool sends nothing:
	// the answer stays JSON.
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		resp, out := post(sid, benchRequest)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(`"Lisbon"`)) || resp.Header.Get("Content-Type") != "application/json" {
			b.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), out)
		}
	}
}

// BenchmarkHTTPIdleSessionHeap reports the heap held by one idle legacy
// session (initialize and notifications/initialized, over loopback), in
// B/session over 2000 sessions. Target: 4 KiB.
func BenchmarkHTTPIdleSessionHeap(b *testing.B) {
	var per float64
	for b.Loop() {
		per, _, _ = measureIdleSessionHeap(b, 2000)
	}
	b.ReportMetric(per, "B/session")
}
