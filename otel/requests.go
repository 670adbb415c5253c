package mcpotel

import (
	"context"
	"sync"

	"github.com/go-json-experiment/json"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// The request counter: how many requests a server received, by protocol
// revision, era and client name, so that an operator sees who still
// speaks the legacy era before retiring it
// (server.Options.ProtocolVersions).
const (
	// RequestsMetric is the name of the counter.
	RequestsMetric = "mcpkit.server.requests"
	// ClientNameKey is the attribute of the client's name (clientInfo.name:
	// initialize's on a legacy session, the envelope's on a 2026
	// request), at most Options.MaxClientNames distinct values.
	ClientNameKey = attribute.Key("mcpkit.client.name")
	// EraKey is the attribute of the era: "legacy" or "modern".
	EraKey = attribute.Key("mcpkit.protocol.era")
	// OtherValue stands for a client name beyond Options.MaxClientNames
	// and for a protocol revision this SDK does not know, so that a peer
	// choosing values at random cannot make new time series.
	OtherValue = "_OTHER"
	// DefaultMaxClientNames is Options.MaxClientNames when it is zero.
	DefaultMaxClientNames = 100
)

// clientNames keeps the client names the counter has seen, up to a cap:
// the first max distinct names count under their own name (cut to
// Options.MaxNameLength), any later one under OtherValue. A client that
// sent no name counts under "".
type clientNames struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func (c *clientNames) value(name string) string {
	if name == "" {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[name]; ok {
		return name
	}
	if len(c.seen) >= c.max {
		return OtherValue
	}
	c.seen[name] = struct{}{}
	return name
}

// countRequest adds one to the request counter for an inbound request
// that a server served (res, err: its answer).
func (t *Telemetry) countRequest(ctx context.Context, c *intercept.Call, res any) {
	version, name := c.Version, ""
	if req, ok := c.Request.(*server.Request); ok {
		name = req.ClientInfo().Name
		if version == "" {
			version = req.ProtocolVersion()
		}
	}
	if c.Method == mcp.MethodInitialize {
		// The session is not initialized yet while its initialize runs:
		// what the client asked for and who it is are in the params, and
		// what it got is in the result.
		var p struct {
			ProtocolVersion string             `json:"protocolVersion"`
			ClientInfo      mcp.Implementation `json:"clientInfo"`
		}
		_ = json.Unmarshal(c.Raw, &p, json.RejectUnknownMembers(false))
		version, name = p.ProtocolVersion, p.ClientInfo.Name
		if r, ok := res.(*mcp.InitializeResult); ok {
			version = r.ProtocolVersion
		}
	}
	if version != "" && !mcp.IsKnown(version) {
		version = OtherValue
	}
	era := "legacy"
	if c.Era == intercept.EraModern {
		era = "modern"
	}
	attrs := make([]attribute.KeyValue, 0, 4+len(t.transport))
	attrs = append(attrs, semconv.McpProtocolVersion(version), EraKey.String(era),
		ClientNameKey.String(t.names.value(truncate(name, t.maxName))))
	attrs = append(attrs, t.transport...)
	t.requests.Add(ctx, 1, metric.WithAttributes(attrs...))
}
