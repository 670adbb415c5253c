package streamhttp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/mcp"
)

// BenchmarkHTTPToolsCallSession measures one legacy tools/call on a
// session over loopback HTTP, answered with JSON: the client's request
// and the reading of the answer (net/http, same process: their
// allocations are counted too), the handler's checks, the session
// lookup, routing, the tool, and the answer.
func BenchmarkHTTPToolsCallSession(b *testing.B) {
	s := server.New(nil)
	server.AddTool(s, &mcp.Tool{Name: "forecast"}, func(ctx context.Context, req *server.CallToolRequest, in httpenv.BenchIn) (httpenv.BenchOut, error) {
		return httpenv.BenchOut{City: in.City, Forecast: []float64{21.5, 22, 19.25}, Summary: "mild"}, nil
	})
	h := NewHandler(s, nil)
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
		req.Header.Set("Accept", httpenv.AcceptBoth)
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
	resp, _ := post("", []byte(httpenv.InitBody(1, "{}")))
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp, _ := post(sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); resp.StatusCode != http.StatusAccepted {
		b.Fatalf("initialized: %d", resp.StatusCode)
	}
	// The request carries a progress token but the tool sends nothing:
	// the answer stays JSON.
	b.ReportAllocs()
	b.SetBytes(int64(len(httpenv.BenchRequest)))
	for b.Loop() {
		resp, out := post(sid, httpenv.BenchRequest)
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

// nopOutbound drops what a request sends (the benchmarked tool sends
// nothing).
type nopOutbound struct{}

func (nopOutbound) Call(context.Context, mcp.ID, string, any, any) error { return server.ErrNoSession }
func (nopOutbound) Notify(context.Context, mcp.ID, string, any) error    { return nil }

// BenchmarkModernToolsCallNoNet measures one 2026 tools/call without a
// network, as the handler serves it: strict decode of the request, the
// params and envelope (Classify), the SEP-2243 header checks, dispatch,
// argument validation, decoding into the typed input, the handler,
// stamping and encoding of the result (compare the server package's
// BenchmarkToolsCall, its legacy twin).
func BenchmarkModernToolsCallNoNet(b *testing.B) {
	p := seam.Of(benchServer())
	hdr := http.Header{}
	hdr.Set("Mcp-Protocol-Version", httpenv.V26)
	hdr.Set("Mcp-Method", mcp.MethodToolsCall)
	hdr.Set("Mcp-Name", "forecast")
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(httpenv.BenchModernRequest)))
	for b.Loop() {
		msg, derr := wire.Decode(httpenv.BenchModernRequest, jsonrpc.Limits{})
		if derr != nil {
			b.Fatal(derr)
		}
		call, e := p.Classify(msg)
		if e != nil || !call.Claimed || call.Err != nil {
			b.Fatal(e, call.Claimed, call.Err)
		}
		if e := checkStandardHeaders(hdr, msg.Method, &call); e != nil {
			b.Fatal(e)
		}
		res, err := p.ServeModern(ctx, call, nopOutbound{}, hdr)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := wire.EncodeResult(msg.ID, res); err != nil {
			b.Fatal(err)
		}
	}
}
