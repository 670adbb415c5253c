package client

import (
	"context"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// capsKey carries a WithCapabilities override in a context.
type capsKey struct{}

// capsOverride is the override: its encoding, and the encoding with the
// tasks extension added, made only if a request declares it.
type capsOverride struct {
	caps  mcp.ClientCapabilities
	plain jsontext.Value
	once  sync.Once
	tasks jsontext.Value
}

// WithCapabilities returns a context whose 2026-07-28 requests declare caps
// in their envelope instead of the client's own capabilities (the tasks
// extension is still added to the requests that need it). It is for a
// client that acts for another one, such as a gateway passing its
// client's capabilities on, so that the server asks only for what that
// client can answer. It changes nothing on a legacy connection, whose
// capabilities were declared once, at initialize. Roots are declared
// without listChanged, as the envelope always does.
func WithCapabilities(ctx context.Context, caps mcp.ClientCapabilities) context.Context {
	if caps.Roots != nil {
		caps.Roots = &mcp.RootsCapability{}
	}
	plain, err := json.Marshal(caps)
	if err != nil {
		return ctx
	}
	return context.WithValue(ctx, capsKey{}, &capsOverride{caps: caps, plain: plain})
}

// overrideCaps applies ctx's WithCapabilities to an envelope.
func overrideCaps(ctx context.Context, env *outEnvelope, tasks bool) {
	o, ok := ctx.Value(capsKey{}).(*capsOverride)
	if !ok {
		return
	}
	env.caps = o.plain
	if tasks {
		o.once.Do(func() {
			if _, t, err := envelopeCaps(o.caps); err == nil {
				o.tasks = t
			} else {
				o.tasks = o.plain
			}
		})
		env.caps = o.tasks
	}
}
