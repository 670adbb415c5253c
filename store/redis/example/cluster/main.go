// Command cluster runs one MCP server as several processes behind a
// round-robin reverse proxy, with sessions, resumable streams and
// cross-instance messages on Redis. Any request of a session may land on
// any instance: an elicitation asked by one instance is answered through
// another, a stream cut on one is resumed on another, a change made on
// one reaches the subscribers of all.
//
//	redis-server --port 6379 --save '' &
//	export MCPKIT_STATE_KEY=$(openssl rand -hex 32)   # the same on every instance
//	go run ./example/cluster instance -listen 127.0.0.1:8081 -redis redis://127.0.0.1:6379 &
//	go run ./example/cluster instance -listen 127.0.0.1:8082 -redis redis://127.0.0.1:6379 &
//	go run ./example/cluster instance -listen 127.0.0.1:8083 -redis redis://127.0.0.1:6379 &
//	go run ./example/cluster proxy -listen 127.0.0.1:8080 -backends 127.0.0.1:8081,127.0.0.1:8082,127.0.0.1:8083
//
// Then point any MCP client at http://127.0.0.1:8080 (from the repository
// root: go run ./cmd/mcpkit inspect http://127.0.0.1:8080).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	redisstore "github.com/mcpkit/mcpkit/store/redis"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: cluster instance|proxy [flags]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "instance":
		return instance(ctx, args[1:])
	case "proxy":
		return proxy(ctx, args[1:])
	}
	return fmt.Errorf("unknown command %q: want instance or proxy", args[0])
}

// instance serves the MCP server on one address, sharing Redis.
func instance(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("instance", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8081", "address to serve on")
	redisURL := fs.String("redis", "redis://127.0.0.1:6379", "Redis URL (redis://host:port/db or unix:///path)")
	prefix := fs.String("prefix", "mcpkit:", "prefix of every Redis key and channel, the same on every instance")
	lease := fs.Duration("task-lease", server.DefaultTaskLease, "how long a task outlives its instance's last heartbeat before another instance fails it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	key, err := server.ParseRequestStateKey(os.Getenv("MCPKIT_STATE_KEY"))
	if err != nil {
		return fmt.Errorf("set MCPKIT_STATE_KEY to the same key on every instance (openssl rand -hex %d): %w", server.RequestStateKeySize, err)
	}
	ropts, err := redis.ParseURL(*redisURL)
	if err != nil {
		return fmt.Errorf("-redis: %w", err)
	}
	rdb := redis.NewClient(ropts)
	defer rdb.Close()
	start, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(start).Err(); err != nil {
		return fmt.Errorf("redis at %s is unreachable: %w", *redisURL, err)
	}
	broker, err := redisstore.NewBroker(start, rdb, &redisstore.BrokerOptions{Prefix: *prefix})
	if err != nil {
		return err
	}
	defer broker.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("instance", *listen)
	s, err := newServer(*listen, key, log, &server.Options{
		TaskStore: redisstore.NewTaskStore(rdb, &redisstore.TaskStoreOptions{Prefix: *prefix}),
		TaskLease: *lease,
	})
	if err != nil {
		return err
	}
	h := streamhttp.NewHandler(s, &streamhttp.Options{
		SessionStore: redisstore.NewSessionStore(rdb, &redisstore.SessionStoreOptions{Prefix: *prefix}),
		EventStore:   redisstore.NewEventStore(rdb, &redisstore.EventStoreOptions{Prefix: *prefix}),
		Broker:       broker,
	})
	defer h.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	log.Info("serving", "addr", ln.Addr().String(), "broker", broker.ID())
	// At the end: the HTTP handler first (it answers the requests in
	// flight), then the server's tasks (recorded failed if unfinished).
	return serve(ctx, hs, ln, func(ctx context.Context) error {
		return errors.Join(h.Shutdown(ctx), s.Shutdown(ctx))
	})
}

// newServer is what every instance serves. Tools:
//   - whoami: the instance that ran the call;
//   - ask: asks the user's name (elicitation; on a legacy session the
//     instance asks the client itself, and the answer may reach another
//     instance) and greets it;
//   - count: counts to n, a log message and a progress notification a
//     second, saying which instance runs it;
//   - touch: reports a change of the resource demo://note to its
//     subscribers on every instance;
//   - work: works for ms milliseconds, as a task when the client asks
//     (its tasks are in Redis: any instance answers for them).
func newServer(name string, key server.RequestStateKey, log *slog.Logger, opts *server.Options) (*server.Server, error) {
	o := server.Options{}
	if opts != nil {
		o = *opts
	}
	o.Info = mcp.Implementation{Name: "mcpkit-cluster-example", Version: "1.0.0"}
	o.Logging, o.Logger, o.RequestStateKeys = true, log, []server.RequestStateKey{key}
	s := server.New(&o)
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	add(server.AddTool(s, &mcp.Tool{Name: "whoami", Description: "The instance that runs this call."},
		func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) { return name, nil }))
	add(server.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks for your name and greets you."},
		func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
			res, ok, err := req.ElicitResult("name")
			if err != nil {
				return "", err
			}
			if !ok {
				return "", server.NeedInput().Elicit("name", &mcp.ElicitParams{
					Message:         "What is your name?",
					RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
				})
			}
			if res.Action != mcp.ElicitActionAccept {
				return "no name given", nil
			}
			return fmt.Sprintf("hello %v, from %s", res.Content["name"], name), nil
		}))
	type countIn struct {
		N int `json:"n" jsonschema:"description=how far to count (1 to 600)"`
	}
	add(server.AddTool(s, &mcp.Tool{Name: "count", Description: "Counts to n, one step a second."},
		func(ctx context.Context, req *server.CallToolRequest, in countIn) (string, error) {
			n := min(max(in.N, 1), 600)
			for i := 1; i <= n; i++ {
				_ = req.Log(ctx, mcp.LevelInfo, "count", fmt.Sprintf("%d of %d on %s", i, n, name))
				_ = req.Progress(ctx, float64(i), float64(n), "")
				if i == n {
					break
				}
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			return fmt.Sprintf("counted to %d on %s", n, name), nil
		}))
	type workIn struct {
		Nonce string `json:"nonce" jsonschema:"description=echoed in the result"`
		Ms    int    `json:"ms" jsonschema:"description=how long to work (0 to 60000)"`
	}
	add(server.AddTool(s, &mcp.Tool{Name: "work", Description: "Works for ms milliseconds; may run as a task.",
		Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
		func(ctx context.Context, req *server.CallToolRequest, in workIn) (string, error) {
			select {
			case <-time.After(time.Duration(min(max(in.Ms, 0), 60000)) * time.Millisecond):
			case <-ctx.Done():
				return "", ctx.Err()
			}
			return fmt.Sprintf("work %s done on %s", in.Nonce, name), nil
		}))
	var notes atomic.Int64
	add(s.AddResource(&mcp.Resource{URI: "demo://note", Name: "note", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{
				URI: "demo://note", MIMEType: "text/plain", Text: fmt.Sprintf("note %d (read on %s)", notes.Load(), name)}}}, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "touch", Description: "Changes demo://note: its subscribers on every instance hear of it."},
		func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
			notes.Add(1)
			s.ResourceUpdated("demo://note")
			return "touched on " + name, nil
		}))
	return s, errors.Join(errs...)
}

// proxy passes each request to the next backend in turn, skipping
// backends that refuse connections. Responses are streamed as they come
// (event streams included).
func proxy(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve on")
	backends := fs.String("backends", "127.0.0.1:8081,127.0.0.1:8082,127.0.0.1:8083", "comma-separated backend addresses")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rr := newRoundRobin(strings.Split(*backends, ","))
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "proxy: serving on", ln.Addr().String(), "for", *backends)
	return serve(ctx, &http.Server{Handler: rr, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}, ln, nil)
}

// serve serves hs on ln until ctx ends, then shuts down within 5 s:
// first end (if set) — the MCP handler's Shutdown, which answers the
// requests in flight and ends the long-lived streams that would otherwise
// hold http.Server.Shutdown to its deadline —, then the connections.
func serve(ctx context.Context, hs *http.Server, ln net.Listener, end func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }() // owned here: ends at Shutdown/Close
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if end != nil {
		_ = end(sctx)
	}
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	<-errc
	return nil
}

// roundRobin is a minimal load balancer without sticky sessions.
type roundRobin struct {
	backends []string
	next     atomic.Uint64
	client   *http.Client

	mu   sync.Mutex
	down map[string]time.Time // backends that refused a connection, until when
}

// maxProxiedBody caps a request body the proxy buffers (to send it to
// another backend when one refuses the connection).
const maxProxiedBody = 4 << 20

func newRoundRobin(backends []string) *roundRobin {
	return &roundRobin{
		backends: backends,
		client: &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 64,
		}},
		down: make(map[string]time.Time),
	}
}

func (p *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxProxiedBody+1))
	if err != nil || len(body) > maxProxiedBody {
		http.Error(w, "request body unreadable or too large", http.StatusRequestEntityTooLarge)
		return
	}
	for range len(p.backends) {
		backend := p.pick()
		out, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+backend+r.URL.RequestURI(), strings.NewReader(string(body)))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out.Header = r.Header.Clone()
		out.Host = r.Host
		resp, err := p.client.Do(out)
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				p.markDown(backend)
				continue // never reached the backend: another may take it
			}
			http.Error(w, "backend failed: "+err.Error(), http.StatusBadGateway)
			return
		}
		copyResponse(w, resp)
		return
	}
	http.Error(w, "no backend is up", http.StatusBadGateway)
}

// pick returns the next backend not known to be down.
func (p *roundRobin) pick() string {
	now := time.Now()
	for range len(p.backends) {
		b := p.backends[p.next.Add(1)%uint64(len(p.backends))]
		p.mu.Lock()
		until, isDown := p.down[b]
		p.mu.Unlock()
		if !isDown || now.After(until) {
			return b
		}
	}
	return p.backends[p.next.Add(1)%uint64(len(p.backends))]
}

func (p *roundRobin) markDown(b string) {
	p.mu.Lock()
	p.down[b] = time.Now().Add(2 * time.Second)
	p.mu.Unlock()
}

// copyResponse streams resp to w, flushing after each read so that
// events reach the client as they come.
func copyResponse(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	for k, v := range resp.Header {
		switch k {
		case "Connection", "Keep-Alive", "Transfer-Encoding", "Content-Length":
			continue // hop by hop, or no longer true once streamed
		}
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}
