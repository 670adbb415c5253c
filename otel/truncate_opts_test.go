package mcpotel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"tool", 4, "tool"},
		{"tools", 4, "tool" + TruncationMark},
		{"aé", 2, "a" + TruncationMark},   // é (2 bytes) straddles the bound
		{"a€b", 3, "a" + TruncationMark},  // € (3 bytes)
		{"a😀b", 4, "a" + TruncationMark},  // 😀 (4 bytes)
		{"a😀b", 5, "a😀" + TruncationMark}, // on the boundary
		{"a\xffb", 8, "a\uFFFDb"},         // invalid input, short
		{"ab\xff\xffcd", 4, "ab\uFFFD" + TruncationMark},
		{strings.Repeat("\x80", 10), 4, "\uFFFD" + TruncationMark}, // continuation bytes only
		{"", 4, ""},
	} {
		got := truncate(tc.in, tc.max)
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// TestMaxLengthOptions: Options.MaxNameLength and MaxStatusLength set
// the bounds; zero means the defaults.
func TestMaxLengthOptions(t *testing.T) {
	run := func(opts Options, name, errText string) tracetest.SpanStub {
		t.Helper()
		spans := tracetest.NewInMemoryExporter()
		opts.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
		tel, err := New(&opts)
		if err != nil {
			t.Fatal(err)
		}
		h := tel.Interceptor()(func(context.Context, *intercept.Call) (any, error) { return nil, errors.New(errText) })
		h(context.Background(), &intercept.Call{Side: intercept.Server, Inbound: true, Method: mcp.MethodToolsCall, Name: name})
		got := spans.GetSpans()
		if len(got) != 1 {
			t.Fatalf("%d spans", len(got))
		}
		return got[0]
	}
	long := strings.Repeat("n", 5000)
	sp := run(Options{MaxNameLength: 10, MaxStatusLength: 20}, long, long)
	if sp.Name != "tools/call nnnnnnnnnn…" || attr(sp, "gen_ai.tool.name") != "nnnnnnnnnn…" {
		t.Errorf("MaxNameLength 10: span %q, tool %q", sp.Name, attr(sp, "gen_ai.tool.name"))
	}
	if sp.Status.Description != strings.Repeat("n", 20)+"…" {
		t.Errorf("MaxStatusLength 20: status %q", sp.Status.Description)
	}
	sp = run(Options{}, long, long)
	if want := "tools/call " + strings.Repeat("n", DefaultMaxNameLength) + TruncationMark; sp.Name != want {
		t.Errorf("default span name of %d bytes, want %d", len(sp.Name), len(want))
	}
	if want := strings.Repeat("n", DefaultMaxStatusLength) + TruncationMark; sp.Status.Description != want {
		t.Errorf("default status of %d bytes, want %d", len(sp.Status.Description), len(want))
	}
	sp = run(Options{}, "short", "short")
	if sp.Name != "tools/call short" || sp.Status.Description != "short" {
		t.Errorf("short values changed: %q %q", sp.Name, sp.Status.Description)
	}
}
