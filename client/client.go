package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Handlers for the requests a server may send. Each registered handler
// declares the matching client capability in initialize.
type (
	// ElicitationHandler answers elicitation/create: it asks the user and
	// returns accept (with content, in form mode), decline or cancel.
	ElicitationHandler func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// SamplingHandler answers sampling/createMessage. To refuse with a
	// specific code (such as -1 for "user rejected"), return a
	// *jsonrpc.Error with that code.
	SamplingHandler func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// RootsHandler answers roots/list.
	RootsHandler func(ctx context.Context) (*mcp.ListRootsResult, error)
)

// Options configures a Client. The zero value is usable: it offers the
// newest legacy revision and declares no capabilities.
type Options struct {
	// Info identifies the client (clientInfo). An empty name is sent as
	// "mcpkit".
	Info mcp.Implementation
	// ProtocolVersion is the revision offered in initialize. Default
	// mcp.LatestLegacy. The client accepts any legacy revision the server
	// answers with and refuses others.
	ProtocolVersion string
	// Logger receives the client's own diagnostics. Nil discards them.
	Logger *slog.Logger
	// CallTimeout bounds each request whose context has no deadline.
	// Zero: only the caller's context bounds it.
	CallTimeout time.Duration
	// Limits bound each incoming message.
	Limits jsonrpc.Limits
	// MaxInFlight bounds the server requests handled at once.
	MaxInFlight int
	// Observe, when set, sees every message read (in=true) and written.
	Observe func(in bool, msg []byte)

	// Elicitation answers elicitation/create and declares elicitation
	// (form mode, plus URL mode when ElicitationURL is set).
	Elicitation ElicitationHandler
	// ElicitationURL declares URL-mode elicitation as well.
	ElicitationURL bool
	// ElicitationDefaults fills the requested schema's defaults into the
	// omitted fields of an accepted form response (SEP-1034) and declares
	// elicitation.form.applyDefaults.
	ElicitationDefaults bool
	// Sampling answers sampling/createMessage and declares sampling.
	Sampling SamplingHandler
	// SamplingTools declares sampling.tools (tool use in sampling).
	SamplingTools bool
	// Roots answers roots/list and declares roots (with listChanged:
	// call RootsChanged when they change).
	Roots RootsHandler

	// Notification handlers. They run one at a time, in arrival order, on
	// a goroutine the client owns; they may call the client.
	OnLog                  func(ctx context.Context, p *mcp.LoggingMessageParams)
	OnToolsListChanged     func(ctx context.Context)
	OnPromptsListChanged   func(ctx context.Context)
	OnResourcesListChanged func(ctx context.Context)
	OnResourceUpdated      func(ctx context.Context, uri string)
	OnElicitationComplete  func(ctx context.Context, elicitationID string)
	// OnNotification receives every other notification.
	OnNotification func(ctx context.Context, method string, params jsontext.Value)
}

// notificationQueue bounds notifications waiting for their handler; when
// it is full, reading from the server pauses.
const notificationQueue = 256

// Client is a connection to one MCP server. All methods are safe for
// concurrent use.
type Client struct {
	opts Options
	log  *slog.Logger
	conn *jsonrpc.Conn
	caps mcp.ClientCapabilities

	init mcp.InitializeResult

	progress sync.Map // progress token (mcp.ID) → func(*mcp.ProgressParams)

	notes     chan *jsonrpc.Message
	notesDone chan struct{}
	stop      context.CancelFunc
	closeOnce sync.Once
	t         transport.Conn
	closeErr  error
}

// ErrUnsupportedVersion is returned by Connect when the server answers
// with a protocol revision the client does not speak.
var ErrUnsupportedVersion = errors.New("mcp: the server chose a protocol version this client does not support")

// Connect starts a session over t: it sends initialize, checks the
// revision the server chose, and sends notifications/initialized. On
// failure the connection is closed.
//
// When t has a listening stream for server messages that belong to no
// request (it implements interface{ Listen() }, as the Streamable HTTP
// transport does with its GET stream) and the client can answer server
// requests (Elicitation, Sampling or Roots is set), Connect calls Listen
// once the session is up. Listen must not block: Connect does not wait
// for the stream.
func Connect(ctx context.Context, t transport.Conn, opts *Options) (*Client, error) {
	c := &Client{t: t, notes: make(chan *jsonrpc.Message, notificationQueue), notesDone: make(chan struct{})}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Info.Name == "" {
		c.opts.Info.Name = "mcpkit"
	}
	if c.opts.Info.Version == "" {
		c.opts.Info.Version = "0.0.0"
	}
	if c.opts.ProtocolVersion == "" {
		c.opts.ProtocolVersion = mcp.LatestLegacy
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.caps = c.capabilities()
	c.conn = jsonrpc.NewConn(t, jsonrpc.ConnOptions{
		Handler:     (*handler)(c),
		Limits:      c.opts.Limits,
		MaxInFlight: c.opts.MaxInFlight,
		CallTimeout: c.opts.CallTimeout,
		Logger:      c.log,
		Observe:     c.opts.Observe,
	})
	notesCtx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go c.runNotifications(notesCtx) // owned by c: ends at Close
	c.conn.Start()
	if err := c.initialize(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if l, ok := t.(interface{ Listen() }); ok && (c.opts.Elicitation != nil || c.opts.Sampling != nil || c.opts.Roots != nil) {
		l.Listen()
	}
	return c, nil
}

func (c *Client) capabilities() mcp.ClientCapabilities {
	var caps mcp.ClientCapabilities
	if c.opts.Elicitation != nil {
		caps.Elicitation = &mcp.ElicitationCapability{Form: &mcp.FormElicitationCapability{ApplyDefaults: c.opts.ElicitationDefaults}}
		if c.opts.ElicitationURL {
			caps.Elicitation.URL = &struct{}{}
		}
	}
	if c.opts.Sampling != nil {
		caps.Sampling = &mcp.SamplingCapability{}
		if c.opts.SamplingTools {
			caps.Sampling.Tools = &struct{}{}
		}
	}
	if c.opts.Roots != nil {
		caps.Roots = &mcp.RootsCapability{ListChanged: true}
	}
	return caps
}

func (c *Client) initialize(ctx context.Context) error {
	params := &mcp.InitializeParams{
		ProtocolVersion: c.opts.ProtocolVersion,
		Capabilities:    c.caps,
		ClientInfo:      c.opts.Info,
	}
	if err := c.conn.Call(ctx, mcp.MethodInitialize, params, &c.init); err != nil {
		return fmt.Errorf("mcp: initialize: %w", err)
	}
	if !slices.Contains(mcp.LegacyVersions(), c.init.ProtocolVersion) {
		return fmt.Errorf("%w: %q", ErrUnsupportedVersion, c.init.ProtocolVersion)
	}
	if err := c.conn.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
		return fmt.Errorf("mcp: notifications/initialized: %w", err)
	}
	return nil
}

// ProtocolVersion returns the negotiated revision.
func (c *Client) ProtocolVersion() string { return c.init.ProtocolVersion }

// ServerInfo returns what the server said about itself.
func (c *Client) ServerInfo() mcp.Implementation { return c.init.ServerInfo }

// ServerCapabilities returns what the server offers.
func (c *Client) ServerCapabilities() mcp.ServerCapabilities { return c.init.Capabilities }

// Instructions returns the server's instructions for the model.
func (c *Client) Instructions() string { return c.init.Instructions }

// Close ends the connection, fails calls in flight, and stops the
// notification goroutine. It returns what the transport reported.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.conn.Close()
		c.stop()
		<-c.notesDone
		// The connection closed the transport and discarded the result;
		// Close is idempotent, and transports that remember how they ended
		// (transport/command: how the server process exited) report it
		// again.
		c.closeErr = c.t.Close()
	})
	return c.closeErr
}

// Wait blocks until the connection ends and returns why (io.EOF when the
// server closed it).
func (c *Client) Wait() error { return c.conn.Wait() }

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// call sends a request, attaching a progress token when ctx carries a
// progress function (see WithProgress).
func (c *Client) call(ctx context.Context, method string, params any, meta *mcp.Meta, result any) error {
	if fn := progressFunc(ctx); fn != nil && meta != nil {
		token := mcp.StringID(randToken())
		m := make(mcp.Meta, len(*meta)+1)
		for k, v := range *meta {
			m[k] = v
		}
		m[mcp.MetaKeyProgressToken] = token
		*meta = m
		c.progress.Store(token, fn)
		defer c.progress.Delete(token)
	}
	return c.conn.Call(ctx, method, params, result)
}
