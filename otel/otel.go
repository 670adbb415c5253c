package mcpotel

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/mcpkit/mcpkit/otel"

// Network transports for Options.Transport (network.transport).
const (
	TransportPipe = "pipe" // stdio and other byte streams
	TransportTCP  = "tcp"  // Streamable HTTP
)

// Options configures the telemetry. The zero value uses the global
// providers and the W3C trace context propagator.
type Options struct {
	// TracerProvider makes the spans. Nil: otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the histograms. Nil: otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator carries the trace context in params._meta. Nil:
	// propagation.TraceContext (traceparent, tracestate).
	Propagator propagation.TextMapPropagator
	// Transport is the network.transport of every span and measurement
	// ("pipe", "tcp"); "" leaves it out.
	Transport string
	// MaxNameLength bounds, in bytes, each value a peer chooses that
	// becomes part of a span name or an attribute: the method, the tool
	// or prompt name, the resource URI, the session id, the protocol
	// version and the request id. A longer value is cut at the last UTF-8
	// character boundary at or below the bound and ends with
	// TruncationMark, so it is at most MaxNameLength+3 bytes and always
	// valid UTF-8 (invalid bytes in any value become U+FFFD). Zero or
	// less: DefaultMaxNameLength.
	MaxNameLength int
	// MaxStatusLength bounds, in bytes, a failed span's status
	// description (the error's text, which may quote the peer's error
	// message), cut the same way. Zero or less: DefaultMaxStatusLength.
	MaxStatusLength int
	// MaxClientNames bounds the distinct client names (clientInfo.name)
	// the request counter (RequestsMetric) keeps as attribute values: the
	// first ones seen count under their own name, later ones under
	// OtherValue. Zero or less: DefaultMaxClientNames.
	MaxClientNames int
}

// The default bounds of the values a span takes from a peer.
const (
	// DefaultMaxNameLength is Options.MaxNameLength when it is zero.
	DefaultMaxNameLength = 256
	// DefaultMaxStatusLength is Options.MaxStatusLength when it is zero.
	DefaultMaxStatusLength = 1024
)

// TruncationMark ends a value cut to Options.MaxNameLength or
// Options.MaxStatusLength: U+2026 HORIZONTAL ELLIPSIS (3 bytes).
const TruncationMark = "\u2026"

// Telemetry is the OpenTelemetry instrumentation of one server or
// client. Safe for concurrent use.
type Telemetry struct {
	tracer     trace.Tracer
	prop       propagation.TextMapPropagator
	transport  []attribute.KeyValue
	maxName    int
	maxStatus  int
	serverOp   mcpconv.ServerOperationDuration
	clientOp   mcpconv.ClientOperationDuration
	serverSess mcpconv.ServerSessionDuration
	clientSess mcpconv.ClientSessionDuration
	requests   metric.Int64Counter // RequestsMetric (requests.go)
	names      clientNames
}

// New returns the instrumentation; opts may be nil. It fails only when
// the meter refuses to make an instrument.
func New(opts *Options) (*Telemetry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	if o.Propagator == nil {
		o.Propagator = propagation.TraceContext{}
	}
	if o.MaxNameLength <= 0 {
		o.MaxNameLength = DefaultMaxNameLength
	}
	if o.MaxStatusLength <= 0 {
		o.MaxStatusLength = DefaultMaxStatusLength
	}
	if o.MaxClientNames <= 0 {
		o.MaxClientNames = DefaultMaxClientNames
	}
	t := &Telemetry{tracer: o.TracerProvider.Tracer(ScopeName), prop: o.Propagator, maxName: o.MaxNameLength, maxStatus: o.MaxStatusLength}
	if o.Transport != "" {
		t.transport = []attribute.KeyValue{semconv.NetworkTransportKey.String(o.Transport)}
	}
	meter := o.MeterProvider.Meter(ScopeName)
	t.names = clientNames{max: o.MaxClientNames, seen: make(map[string]struct{})}
	var errs [5]error
	t.serverOp, errs[0] = mcpconv.NewServerOperationDuration(meter)
	t.clientOp, errs[1] = mcpconv.NewClientOperationDuration(meter)
	t.serverSess, errs[2] = mcpconv.NewServerSessionDuration(meter)
	t.clientSess, errs[3] = mcpconv.NewClientSessionDuration(meter)
	t.requests, errs[4] = meter.Int64Counter(RequestsMetric, metric.WithUnit("{request}"),
		metric.WithDescription("Requests a server received, by protocol revision, era and client name."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, errors.New("otel: making the instruments: " + err.Error())
	}
	return t, nil
}

// Interceptor returns the interceptor to install in
// server.Options.Interceptors or client.Options.Interceptors. Put it
// first, so that its spans and durations include the other
// interceptors.
func (t *Telemetry) Interceptor() intercept.Interceptor {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, c *intercept.Call) (any, error) {
			return t.handle(ctx, c, next)
		}
	}
}

func (t *Telemetry) handle(ctx context.Context, c *intercept.Call, next intercept.Handler) (any, error) {
	if c.Inbound {
		ctx = t.prop.Extract(ctx, metaCarrier{c})
	}
	method := truncate(c.Method, t.maxName)
	target, attrs := t.describe(c, method)
	attrs = append(attrs, t.transport...)
	name := method
	if target != "" {
		name += " " + target
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(kind(c)), trace.WithAttributes(attrs...))
	defer span.End()
	if !c.Inbound {
		t.prop.Inject(ctx, metaCarrier{c})
	}
	start := time.Now()
	res, err := next(ctx, c)
	elapsed := time.Since(start).Seconds()
	if err != nil {
		errType := "_OTHER"
		if e, ok := jsonrpc.AsError(err); ok {
			code := strconv.FormatInt(e.Code, 10)
			errType = code
			span.SetAttributes(semconv.RPCResponseStatusCode(code))
		} else if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			errType = "timeout"
			if errors.Is(err, context.Canceled) {
				errType = "cancelled"
			}
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		span.SetStatus(codes.Error, truncate(err.Error(), t.maxStatus))
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	} else if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, "the tool returned isError")
		attrs = append(attrs, semconv.ErrorTypeKey.String("tool_error"))
	}
	if !c.Notification {
		mmethod, mattrs := metricAttrs(c.Method, attrs, err == nil)
		method := mcpconv.MethodNameAttr(mmethod)
		if c.Side == intercept.Server && c.Inbound {
			t.serverOp.Record(ctx, elapsed, method, mattrs...)
			t.countRequest(ctx, c, res)
		} else if c.Side == intercept.Client && !c.Inbound {
			t.clientOp.Record(ctx, elapsed, method, mattrs...)
		}
		if c.Side == intercept.Server && c.Inbound && c.Method == mcp.MethodInitialize && err == nil {
			t.watchSession(c)
		}
	}
	return res, err
}

// watchSession records mcp.server.session.duration when the legacy
// session c initialized ends. The goroutine is the session's: it ends
// with it.
func (t *Telemetry) watchSession(c *intercept.Call) {
	req, ok := c.Request.(*server.Request)
	if !ok || req.Session() == nil {
		return
	}
	ss, start := req.Session(), time.Now()
	attrs := append([]attribute.KeyValue{semconv.McpProtocolVersion(truncate(ss.ProtocolVersion(), t.maxName))}, t.transport...)
	go func() {
		err := ss.Wait()
		a := attrs
		if err != nil && !isEOF(err) {
			a = append(a, semconv.ErrorTypeKey.String("_OTHER"))
		}
		t.serverSess.Record(context.Background(), time.Since(start).Seconds(), a...)
	}()
}

// WatchClient records mcp.client.session.duration when c's connection
// ends (from now). The goroutine ends with the connection.
func (t *Telemetry) WatchClient(c *client.Client) {
	start := time.Now()
	attrs := append([]attribute.KeyValue{semconv.McpProtocolVersion(truncate(c.ProtocolVersion(), t.maxName))}, t.transport...)
	go func() {
		<-c.Done()
		t.clientSess.Record(context.Background(), time.Since(start).Seconds(), attrs...)
	}()
}

func isEOF(err error) bool { return jsonrpc.IsEOF(err) || errors.Is(err, jsonrpc.ErrClosed) }

// kind is the span kind of a Call.
func kind(c *intercept.Call) trace.SpanKind {
	switch {
	case c.Notification && c.Inbound:
		return trace.SpanKindConsumer
	case c.Notification:
		return trace.SpanKindProducer
	case c.Inbound:
		return trace.SpanKindServer
	}
	return trace.SpanKindClient
}

// describe returns the span's target and attributes, every value a peer
// chose truncated to t.maxName (method already is).
func (t *Telemetry) describe(c *intercept.Call, method string) (string, []attribute.KeyValue) {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, semconv.McpMethodNameKey.String(method))
	if c.SessionID != "" {
		attrs = append(attrs, semconv.McpSessionID(truncate(c.SessionID, t.maxName)))
	}
	if c.Version != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(truncate(c.Version, t.maxName)))
	}
	if c.ID.IsValid() {
		attrs = append(attrs, semconv.JSONRPCRequestID(truncate(c.ID.String(), t.maxName)))
	}
	name := truncate(c.Name, t.maxName)
	switch c.Method {
	case mcp.MethodToolsCall:
		if name != "" {
			attrs = append(attrs, semconv.GenAIToolName(name), semconv.GenAIOperationNameExecuteTool)
		}
	case mcp.MethodPromptsGet:
		if name != "" {
			attrs = append(attrs, semconv.GenAIPromptName(name))
		}
	case mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		if name != "" {
			attrs = append(attrs, semconv.McpResourceURI(name))
		}
	default:
		name = ""
	}
	return name, attrs
}

// metricAttrs returns the method and the attributes of low cardinality
// for the histograms: no session or request id, no resource URI. A peer
// can send any number of distinct names, so a failed request (an unknown
// tool, prompt or method fails) keeps neither its tool or prompt name
// nor its method unless the method is one of MCP's (else "_OTHER"); a
// request that succeeded names what the server has.
func metricAttrs(method string, attrs []attribute.KeyValue, ok bool) (string, []attribute.KeyValue) {
	if !ok && !mcp.IsMethod(method) {
		method = "_OTHER"
	}
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch a.Key {
		case semconv.McpSessionIDKey, semconv.JSONRPCRequestIDKey, semconv.McpMethodNameKey, semconv.McpResourceURIKey:
			continue
		case semconv.GenAIToolNameKey, semconv.GenAIPromptNameKey:
			if !ok {
				continue
			}
		}
		out = append(out, a)
	}
	return method, out
}

// truncate returns s if it is valid UTF-8 of at most max bytes; else s
// cut at the last character boundary at or below max, invalid bytes
// replaced by U+FFFD, followed by TruncationMark when it was cut.
func truncate(s string, max int) string {
	if len(s) <= max {
		if utf8.ValidString(s) {
			return s
		}
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	cut := max
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	return strings.ToValidUTF8(s[:cut], "\uFFFD") + TruncationMark
}

// metaCarrier is a Call's _meta as a propagation.TextMapCarrier: Get
// reads string members, Set adds them with Call.SetMeta.
type metaCarrier struct{ c *intercept.Call }

func (m metaCarrier) Get(key string) string {
	s, _ := m.c.MetaString(key)
	return s
}

func (m metaCarrier) Set(key, value string) { m.c.SetMeta(key, value) }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m.c.Meta))
	for k := range m.c.Meta {
		keys = append(keys, k)
	}
	return keys
}
