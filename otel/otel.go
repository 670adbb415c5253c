package mcpotel

import (
	"context"
	"errors"
	"strconv"
	"time"

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
}

// Telemetry is the OpenTelemetry instrumentation of one server or
// client. Safe for concurrent use.
type Telemetry struct {
	tracer     trace.Tracer
	prop       propagation.TextMapPropagator
	transport  []attribute.KeyValue
	serverOp   mcpconv.ServerOperationDuration
	clientOp   mcpconv.ClientOperationDuration
	serverSess mcpconv.ServerSessionDuration
	clientSess mcpconv.ClientSessionDuration
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
	t := &Telemetry{tracer: o.TracerProvider.Tracer(ScopeName), prop: o.Propagator}
	if o.Transport != "" {
		t.transport = []attribute.KeyValue{semconv.NetworkTransportKey.String(o.Transport)}
	}
	meter := o.MeterProvider.Meter(ScopeName)
	var errs [4]error
	t.serverOp, errs[0] = mcpconv.NewServerOperationDuration(meter)
	t.clientOp, errs[1] = mcpconv.NewClientOperationDuration(meter)
	t.serverSess, errs[2] = mcpconv.NewServerSessionDuration(meter)
	t.clientSess, errs[3] = mcpconv.NewClientSessionDuration(meter)
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
	target, attrs := describe(c)
	attrs = append(attrs, t.transport...)
	name := c.Method
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
		span.SetStatus(codes.Error, err.Error())
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	} else if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, "the tool returned isError")
		attrs = append(attrs, semconv.ErrorTypeKey.String("tool_error"))
	}
	if !c.Notification {
		method := mcpconv.MethodNameAttr(c.Method)
		mattrs := metricAttrs(attrs)
		if c.Side == intercept.Server && c.Inbound {
			t.serverOp.Record(ctx, elapsed, method, mattrs...)
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
	attrs := append([]attribute.KeyValue{semconv.McpProtocolVersion(ss.ProtocolVersion())}, t.transport...)
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
	attrs := append([]attribute.KeyValue{semconv.McpProtocolVersion(c.ProtocolVersion())}, t.transport...)
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

// describe returns the span's target and attributes.
func describe(c *intercept.Call) (string, []attribute.KeyValue) {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, semconv.McpMethodNameKey.String(c.Method))
	if c.SessionID != "" {
		attrs = append(attrs, semconv.McpSessionID(c.SessionID))
	}
	if c.Version != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(c.Version))
	}
	if c.ID.IsValid() {
		attrs = append(attrs, semconv.JSONRPCRequestID(c.ID.String()))
	}
	name := c.Name
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

// metricAttrs keeps the attributes of low cardinality for the
// histograms (no session or request id).
func metricAttrs(attrs []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch a.Key {
		case semconv.McpSessionIDKey, semconv.JSONRPCRequestIDKey, semconv.McpMethodNameKey, semconv.McpResourceURIKey:
			continue
		}
		out = append(out, a)
	}
	return out
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
