package interop

// The reference everything server — a legacy-only server over stdio —
// behind the gateway, served on Streamable HTTP to mcpkit's client in
// both eras: its tools listed under the prefix, echo, progress, its
// elicitation and sampling requests bridged to the client (an
// input-required result answered by the client's handler on 2026-07-28,
// a real server→client request on 2025-11-25), log messages emitted
// during a call, a resource read and a prompt.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

func TestGatewayEverythingStdio(t *testing.T) {
	t.Parallel()
	tg := startGateway(t, &gateway.Options{Upstreams: []gateway.Upstream{everythingUpstream(t, "everything", "ev")}})
	tg.requireReady(t)
	if h := tg.Health()[0]; h.Era != client.EraLegacy.String() || h.Tools < 10 || h.Prompts == 0 || h.Resources == 0 {
		t.Fatalf("health of the everything upstream: %+v", h)
	}
	// The calls of one client at a time: a legacy upstream's requests are
	// attributed to the one call in flight.
	for _, e := range clientEras {
		t.Run(e.name, func(t *testing.T) {
			gc := connectGateway(t, tg.URL, e.version)
			if gc.Era() != e.era {
				t.Fatalf("the client speaks %s to the gateway, want %s", gc.Era(), e.era)
			}
			exerciseGatewayEverything(t, gc)
		})
	}
}

func exerciseGatewayEverything(t *testing.T, gc *gwClient) {
	ctx := testCtx(t)

	names := toolNames(t, ctx, gc.Client)
	for _, want := range []string{"ev_echo", "ev_get-sum", "ev_trigger-long-running-operation", "ev_trigger-elicitation-request", "ev_trigger-sampling-request", "ev_toggle-simulated-logging"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list through the gateway lacks %s: %v", want, names)
		}
	}
	if unprefixed := len(names) - len(withPrefix(names, "ev_")); unprefixed != 0 {
		t.Errorf("%d tools without the prefix: %v", unprefixed, names)
	}

	if got := callText(t, ctx, gc.Client, "ev_echo", `{"message":"through the gateway"}`); !strings.Contains(got, "Echo: through the gateway") {
		t.Errorf("ev_echo = %q", got)
	}
	if got := callText(t, ctx, gc.Client, "ev_get-sum", `{"a":2,"b":40}`); !strings.Contains(got, "42") {
		t.Errorf("ev_get-sum = %q", got)
	}
	// An unprefixed name is not the upstream's.
	if _, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: []byte(`{"message":"x"}`)}); err == nil {
		t.Error("echo without the prefix was called")
	}

	// Progress of the upstream's call reaches the client's call.
	var mu sync.Mutex
	var progress []float64
	pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
		mu.Lock()
		progress = append(progress, p.Progress)
		mu.Unlock()
	})
	res, err := gc.CallTool(pctx, &mcp.CallToolParams{Name: "ev_trigger-long-running-operation", Arguments: []byte(`{"duration":0.2,"steps":2}`)})
	if err != nil || res.IsError {
		t.Fatalf("ev_trigger-long-running-operation: %v %v", res, err)
	}
	mu.Lock()
	if fmt.Sprint(progress) != "[1 2]" {
		t.Errorf("progress through the gateway %v, want [1 2]", progress)
	}
	mu.Unlock()

	// The upstream's elicitation/create and sampling/createMessage reach
	// the client's handlers, and their answers the upstream.
	if got := callText(t, ctx, gc.Client, "ev_trigger-elicitation-request", ""); !strings.Contains(got, "Ada") {
		t.Errorf("ev_trigger-elicitation-request = %q, want the client's answer (Ada)", got)
	}
	if got := callText(t, ctx, gc.Client, "ev_trigger-sampling-request", `{"prompt":"say hi","maxTokens":20}`); !strings.Contains(got, "sampled through the gateway") {
		t.Errorf("ev_trigger-sampling-request = %q, want the client's sample", got)
	}
	gc.mu.Lock()
	if len(gc.elicits) != 1 || gc.elicits[0].Message == "" || len(gc.samples) != 1 || len(gc.samples[0].Messages) == 0 {
		t.Errorf("the client's handlers got elicitations %+v, samplings %+v: want one of each", gc.elicits, gc.samples)
	}
	gc.mu.Unlock()

	// A log message the upstream sends during a call reaches the client.
	// toggle-simulated-logging starts sending one, at a random level, as
	// it answers (it does not wait for the message to be written, which
	// may then follow the answer); turning it on again sends another.
	if err := gc.SetLoggingLevel(ctx, mcp.LevelDebug); err != nil {
		t.Fatal(err)
	}
	// Other log messages of the upstream during a call (such as the one it
	// sends when it has asked for the roots) reach the client too; the
	// simulated one is awaited among them.
	simulated := func(p *mcp.LoggingMessageParams) bool {
		s, _ := p.Data.(string)
		return strings.Contains(s, "message")
	}
	logged := gc.logDuringCall(func() {
		callText(t, ctx, gc.Client, "ev_toggle-simulated-logging", "") // on: sends one
		callText(t, ctx, gc.Client, "ev_toggle-simulated-logging", "") // off
	}, simulated)
	if logged == nil {
		t.Error("the everything server's simulated log message did not reach the client in 20 calls that each send one")
	}

	// Resources: listed with the prefix, read through it.
	var uri string
	for r, err := range gc.Resources(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.URI, "ev+") {
			t.Errorf("resource %s lacks the prefix", r.URI)
		}
		if uri == "" {
			uri = r.URI
		}
	}
	if uri == "" {
		t.Fatal("no resource listed through the gateway")
	}
	rr, err := gc.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(rr.Contents) == 0 {
		t.Fatalf("resources/read %s: %v, %v", uri, rr, err)
	}
	switch c := rr.Contents[0].(type) {
	case *mcp.TextResourceContents:
		if c.URI != uri || c.Text == "" {
			t.Errorf("read %s: %+v", uri, c)
		}
	case *mcp.BlobResourceContents:
		if c.URI != uri || len(c.Blob) == 0 {
			t.Errorf("read %s: %+v", uri, c)
		}
	}

	// Prompts: with arguments, through the prefix.
	pr, err := gc.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ev_args-prompt", Arguments: map[string]string{"city": "Paris"}})
	if err != nil || len(pr.Messages) == 0 {
		t.Fatalf("prompts/get ev_args-prompt: %v, %v", pr, err)
	}
	if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "Paris") {
		t.Errorf("ev_args-prompt: %+v", pr.Messages[0].Content)
	}
}
