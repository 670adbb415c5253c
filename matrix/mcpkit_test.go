package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/mcp"
)

// The mcpkit client's driver: one client per cell, with every handler a
// user would set, and what they see recorded for the cell's check.

// hangGuard bounds every wait of a cell. It is never a synchronisation: a
// cell that reaches it has failed.
const hangGuard = 20 * time.Second

// seen is what the client's handlers observed during one cell.
type seen struct {
	logs    chan *mcp.LoggingMessageParams
	tools   chan struct{}
	updated chan string

	mu    sync.Mutex
	asked []string // the messages of the elicitations the handler answered
}

func newSeen() *seen {
	return &seen{
		logs:    make(chan *mcp.LoggingMessageParams, 16),
		tools:   make(chan struct{}, 1),
		updated: make(chan string, 16),
	}
}

func (s *seen) ask(msg string) {
	s.mu.Lock()
	s.asked = append(s.asked, msg)
	s.mu.Unlock()
}

func (s *seen) askedList() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

// mcpkitOptions are a user's client options with every handler set.
func mcpkitOptions(e era, id string, obs *seen) *client.Options {
	o := &client.Options{
		Info:            mcp.Implementation{Name: "matrix-" + id, Version: "1"},
		ProtocolVersion: e.Version,
		Listen:          true,
		ElicitationURL:  true,
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			obs.ask(p.Message)
			if p.Mode == mcp.ElicitModeURL {
				if p.URL != urlToAsk {
					return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
				}
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept}, nil
			}
			switch p.Message {
			case "Your name?":
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
			case "Your age?":
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"age": 36}}, nil
			case "Run the job?":
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"confirm": true}}, nil
			}
			return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
		},
		CreateMessageHandler: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "matrix-model",
				Content: mcp.NewSamplingContent(&mcp.TextContent{Text: "Paris"})}, nil
		},
		ListRootsHandler: func(ctx context.Context) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///matrix/a", Name: "a"}}}, nil
		},
		OnLog: func(ctx context.Context, p *mcp.LoggingMessageParams) {
			send(obs.logs, p)
		},
		OnToolsListChanged: func(ctx context.Context) { send(obs.tools, struct{}{}) },
		OnResourceUpdated:  func(ctx context.Context, uri string) { send(obs.updated, uri) },
	}
	apps.Declare(o)
	if o.Extensions == nil {
		o.Extensions = map[string]any{}
	}
	o.Extensions[extID] = map[string]any{}
	return o
}

// mcpkitCell is what a capability's check gets: the connected client, the
// cell's id and era, the fixture behind the topology and what the
// handlers saw.
type mcpkitCell struct {
	c    *client.Client
	id   string
	cell cell
	fx   *fixture
	obs  *seen
	b    *built
}

// recv receives one value, failing at the hang guard.
func recv[T any](ctx context.Context, ch <-chan T, what string) (T, error) {
	var zero T
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		return zero, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
	case <-timer.C:
		return zero, fmt.Errorf("no %s within %v", what, hangGuard)
	}
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// wantText calls a tool and checks its text.
func (x *mcpkitCell) wantText(ctx context.Context, name string, args any, want string) error {
	res, err := x.call(ctx, name, args)
	if err != nil {
		return err
	}
	if res.IsError || textOf(res) != want {
		return fmt.Errorf("%s = %q (isError %v), want %q", name, textOf(res), res.IsError, want)
	}
	return nil
}

func (x *mcpkitCell) call(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: name}
	if args != nil {
		raw, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		p.Arguments = raw
	}
	res, err := x.c.CallTool(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	return res, nil
}

// progressRecorder collects the progress values a call reports.
type progressRecorder chan float64

func withProgress(ctx context.Context) (context.Context, progressRecorder) {
	ch := make(progressRecorder, 32)
	return client.WithProgress(ctx, func(p *mcp.ProgressParams) { send(ch, p.Progress) }), ch
}

// exactly checks that the progress values want arrived, in order, and
// nothing else had arrived by the time the last of them did: each step
// seen once.
func (ch progressRecorder) exactly(ctx context.Context, want ...float64) error {
	var got []float64
	for range want {
		v, err := recv(ctx, ch, fmt.Sprintf("progress (got %v so far, want %v)", got, want))
		if err != nil {
			return err
		}
		got = append(got, v)
	}
	for {
		select {
		case v := <-ch:
			got = append(got, v)
			continue
		default:
		}
		break
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("progress %v, want %v", got, want)
	}
	return nil
}

// mcpkitChecks are the capabilities as the mcpkit client sees them.
var mcpkitChecks = map[string]func(ctx context.Context, x *mcpkitCell) error{
	capToolTyped: func(ctx context.Context, x *mcpkitCell) error {
		out, res, err := client.CallTool[addOut](ctx, x.c, "add", addIn{A: 2, B: 3})
		if err != nil {
			return err
		}
		if out.Sum != 5 || len(res.StructuredContent) == 0 {
			return fmt.Errorf("add = %+v (structured %s), want sum 5", out, res.StructuredContent)
		}
		return nil
	},
	capToolRaw: func(ctx context.Context, x *mcpkitCell) error {
		return x.wantText(ctx, "echo_raw", map[string]int{"x": 1}, `raw {"x":1}`)
	},
	capProgress: func(ctx context.Context, x *mcpkitCell) error {
		pctx, rec := withProgress(ctx)
		if err := x.wantText(pctx, "progress", nil, "progressed"); err != nil {
			return err
		}
		return rec.exactly(ctx, 1, 2, 3)
	},
	capLogging: func(ctx context.Context, x *mcpkitCell) error {
		// Without a session there is no logging/setLevel: the server
		// sends at its own level, debug included.
		stateless := x.cell.Era.Stateless
		if !stateless {
			if err := x.c.SetLoggingLevel(ctx, mcp.LevelInfo); err != nil {
				return fmt.Errorf("set level: %w", err)
			}
		}
		if err := x.wantText(ctx, "log", idIn{ID: x.id}, "logged"); err != nil {
			return err
		}
		// The tool logs at debug, then at info: the first message the
		// client sees must be the info one.
		p, err := recv(ctx, x.obs.logs, "a log message")
		if err != nil {
			return err
		}
		if stateless && p.Level == mcp.LevelDebug {
			if p, err = recv(ctx, x.obs.logs, "the info log message"); err != nil {
				return err
			}
		}
		data, _ := p.Data.(string)
		if p.Level != mcp.LevelInfo || data != "hello "+x.id {
			return fmt.Errorf("log message %s %s, want info %q", p.Level, p.Data, "hello "+x.id)
		}
		return nil
	},
	capCancel: func(ctx context.Context, x *mcpkitCell) error {
		pr := x.fx.probes.get(x.id)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := x.call(cctx, "wait", idIn{ID: x.id})
			done <- err
		}()
		if _, err := recv(ctx, pr.started, "the tool to start"); err != nil {
			return err
		}
		cancel()
		err, rerr := recv(ctx, done, "the cancelled call to return")
		if rerr != nil {
			return rerr
		}
		if !errors.Is(err, context.Canceled) {
			return fmt.Errorf("cancelled call returned %v, want context.Canceled", err)
		}
		if _, err := recv(ctx, pr.ended, "the server to see the cancellation"); err != nil {
			return err
		}
		return nil
	},
	capElicitForm: func(ctx context.Context, x *mcpkitCell) error {
		if err := x.wantText(ctx, "ask", nil, "hello Ada"); err != nil {
			return err
		}
		if got := x.obs.askedList(); !slices.Equal(got, []string{"Your name?"}) {
			return fmt.Errorf("the elicitation handler was asked %q, want once %q", got, "Your name?")
		}
		return nil
	},
	capElicitURL: func(ctx context.Context, x *mcpkitCell) error {
		return x.wantText(ctx, "ask_url", nil, "url accept")
	},
	capSampling: func(ctx context.Context, x *mcpkitCell) error {
		return x.wantText(ctx, "sample", nil, "model matrix-model")
	},
	capRoots: func(ctx context.Context, x *mcpkitCell) error {
		return x.wantText(ctx, "roots", nil, "roots file:///matrix/a")
	},
	capResourceRead: func(ctx context.Context, x *mcpkitCell) error {
		return wantResource(ctx, x.c, "test://text", "some text")
	},
	capResourceTemplate: func(ctx context.Context, x *mcpkitCell) error {
		res, err := x.c.ListResourceTemplates(ctx, nil)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(res.ResourceTemplates, func(t mcp.ResourceTemplate) bool { return t.URITemplate == "test://items/{id}" }) {
			return fmt.Errorf("templates %+v lack test://items/{id}", res.ResourceTemplates)
		}
		return wantResource(ctx, x.c, "test://items/7", "item 7")
	},
	capSubscribe: func(ctx context.Context, x *mcpkitCell) error {
		uri := "test://sub/" + x.id
		if x.cell.Era.modern() {
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			sub, err := x.c.Listen(sctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}})
			if err != nil {
				return fmt.Errorf("listen: %w", err)
			}
			defer sub.Close()
			if err := x.wantText(ctx, "bump", uriIn{URI: uri}, "bumped"); err != nil {
				return err
			}
			return awaitNotification(ctx, notes(sub), func(n client.Notification) bool {
				return n.Method == mcp.NotificationResourcesUpdated && n.URI == uri
			}, "notifications/resources/updated for "+uri)
		}
		if err := x.c.Subscribe(ctx, uri); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
		if err := x.wantText(ctx, "bump", uriIn{URI: uri}, "bumped"); err != nil {
			return err
		}
		for {
			got, err := recv(ctx, x.obs.updated, "notifications/resources/updated for "+uri)
			if err != nil {
				return err
			}
			if got == uri {
				return nil
			}
		}
	},
	capPrompt: func(ctx context.Context, x *mcpkitCell) error {
		res, err := x.c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "topic", Arguments: map[string]string{"topic": "go"}})
		if err != nil {
			return err
		}
		if len(res.Messages) != 1 {
			return fmt.Errorf("prompt messages %+v", res.Messages)
		}
		if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "about go" {
			return fmt.Errorf("prompt content %+v, want about go", res.Messages[0].Content)
		}
		return nil
	},
	capCompletion: func(ctx context.Context, x *mcpkitCell) error {
		res, err := x.c.Complete(ctx, &mcp.CompleteParams{
			Ref:      mcp.CompleteReference{Type: mcp.RefPrompt, Name: "topic"},
			Argument: mcp.CompleteArgument{Name: "topic", Value: "py"},
		})
		if err != nil {
			return err
		}
		if want := []string{"python", "pytorch"}; !slices.Equal(res.Completion.Values, want) {
			return fmt.Errorf("completion %v, want %v", res.Completion.Values, want)
		}
		return nil
	},
	capListChanged: func(ctx context.Context, x *mcpkitCell) error {
		name := "tmp_" + x.id
		var sub <-chan client.Notification
		if x.cell.Era.modern() {
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			s, err := x.c.Listen(sctx, mcp.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				return fmt.Errorf("listen: %w", err)
			}
			defer s.Close()
			sub = notes(s)
		}
		if err := x.wantText(ctx, "touch", idIn{ID: x.id}, "touched"); err != nil {
			return err
		}
		// Other cells change the list too: wait for notifications until
		// the list holds this cell's tool.
		for {
			if sub != nil {
				if err := awaitNotification(ctx, sub, func(n client.Notification) bool {
					return n.Method == mcp.NotificationToolsListChanged
				}, "notifications/tools/list_changed"); err != nil {
					return err
				}
			} else if _, err := recv(ctx, x.obs.tools, "notifications/tools/list_changed"); err != nil {
				return err
			}
			for tool, err := range x.c.Tools(ctx) {
				if err != nil {
					return err
				}
				if tool.Name == name {
					return nil
				}
			}
		}
	},
	capMRTR: func(ctx context.Context, x *mcpkitCell) error {
		pctx, rec := withProgress(ctx)
		if err := x.wantText(pctx, "mrtr", nil, "Ada is 36"); err != nil {
			return err
		}
		if err := rec.exactly(ctx, 1, 2); err != nil {
			return err
		}
		if got := x.obs.askedList(); !slices.Equal(got, []string{"Your name?", "Your age?"}) {
			return fmt.Errorf("the elicitation handler was asked %q, want each question once", got)
		}
		return nil
	},
	capRestart:      restartMidCall,
	capTasks:        runTask,
	capTaskProgress: runTask,
	capExtension: func(ctx context.Context, x *mcpkitCell) error {
		if _, ok := x.c.ServerExtension(extID); !ok {
			return fmt.Errorf("the server does not advertise %s", extID)
		}
		out, err := client.CallMethod[echoOut](ctx, x.c, extEcho, echoIn{Text: "hi"})
		if err != nil {
			return err
		}
		if out.Echo != "echo hi" {
			return fmt.Errorf("%s = %+v", extEcho, out)
		}
		return nil
	},
	capApps: func(ctx context.Context, x *mcpkitCell) error {
		if !apps.Supported(x.c) {
			return errors.New("the server does not advertise MCP Apps")
		}
		for tool, err := range x.c.Tools(ctx) {
			if err != nil {
				return err
			}
			if tool.Name != "viewed" {
				continue
			}
			ui, err := apps.FetchUI(ctx, x.c, &tool)
			if err != nil {
				return fmt.Errorf("fetch view: %w", err)
			}
			if ui.URI != viewURI || ui.HTML != viewHTML {
				return fmt.Errorf("view %s %q", ui.URI, ui.HTML)
			}
			// The tool tells views apart only when the client's
			// capabilities reach it: not without a session, and not
			// through a legacy upstream, which saw the gateway's own once.
			c := x.cell
			want := "data for the view"
			if c.Era.Stateless || (c.Topo.Gateway && !c.Topo.UpEra.modern()) {
				want = "text without a view"
			}
			return x.wantText(ctx, "viewed", nil, want)
		}
		return errors.New("no tool named viewed")
	},
}

func wantResource(ctx context.Context, c *client.Client, uri, want string) error {
	res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return err
	}
	if len(res.Contents) != 1 {
		return fmt.Errorf("read %s: %d contents", uri, len(res.Contents))
	}
	tc, ok := res.Contents[0].(*mcp.TextResourceContents)
	if !ok || tc.Text != want {
		return fmt.Errorf("read %s = %+v, want %q", uri, res.Contents[0], want)
	}
	return nil
}

// notes forwards a subscription's notifications to a channel, closed when
// the subscription ends; the goroutine ends with it.
func notes(sub *client.Subscription) <-chan client.Notification {
	ch := make(chan client.Notification, 64)
	go func() {
		defer close(ch)
		for n := range sub.Notifications() {
			ch <- n
		}
	}()
	return ch
}

// awaitNotification reads ch until match, failing at the hang guard or
// when the subscription ends.
func awaitNotification(ctx context.Context, ch <-chan client.Notification, match func(client.Notification) bool, what string) error {
	for {
		n, ok, err := recvOK(ctx, ch, what)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("the subscription ended before %s", what)
		}
		if match(n) {
			return nil
		}
	}
}

func recvOK[T any](ctx context.Context, ch <-chan T, what string) (T, bool, error) {
	var zero T
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		return v, ok, nil
	case <-ctx.Done():
		return zero, false, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
	case <-timer.C:
		return zero, false, fmt.Errorf("no %s within %v", what, hangGuard)
	}
}

// runTask runs the job tool as a task: its question answered, its final
// state completed, and (task-progress) its progress seen once each.
func runTask(ctx context.Context, x *mcpkitCell) error {
	pctx, rec := withProgress(ctx)
	var mu sync.Mutex
	var statuses []mcp.TaskStatus
	pctx = client.WithTaskStatus(pctx, func(t *client.Task) {
		mu.Lock()
		statuses = append(statuses, t.Status)
		mu.Unlock()
	})
	res, err := x.c.RunToolTask(pctx, &mcp.CallToolParams{Name: "job"})
	if err != nil {
		return fmt.Errorf("run task: %w", err)
	}
	if res.IsError || textOf(res) != "job done, confirmed true" {
		return fmt.Errorf("task result %q (isError %v)", textOf(res), res.IsError)
	}
	mu.Lock()
	st := slices.Clone(statuses)
	mu.Unlock()
	if len(st) == 0 || st[len(st)-1] != mcp.TaskCompleted {
		return fmt.Errorf("task statuses seen %v, want the last completed", st)
	}
	if x.cell.Cap == capTaskProgress {
		return rec.exactly(ctx, 1, 2)
	}
	return nil
}

// runMcpkit runs one cell with the mcpkit client.
func runMcpkit(ctx context.Context, b *built, c cell, id string) error {
	check, ok := mcpkitChecks[c.Cap]
	if !ok {
		return fmt.Errorf("no mcpkit check for %s", c.Cap)
	}
	conn, err := b.ep.dial(c.Carrier, c.Era)
	if err != nil {
		return err
	}
	obs := newSeen()
	cl, err := client.Connect(ctx, conn, mcpkitOptions(c.Era, id, obs))
	if err != nil {
		conn.Close()
		return fmt.Errorf("connect: %w", err)
	}
	defer cl.Close()
	if got := cl.ProtocolVersion(); got != c.Era.Version {
		return fmt.Errorf("the client speaks %s, want %s", got, c.Era.Version)
	}
	if c.Era.modern() {
		// A 2026-07-28 client learns the server's capabilities and
		// extensions by asking.
		if _, err := cl.Discover(ctx); err != nil {
			return fmt.Errorf("discover: %w", err)
		}
	}
	return check(ctx, &mcpkitCell{c: cl, id: id, cell: c, fx: b.fx, obs: obs, b: b})
}

// restartMidCall: on a cluster of its own, a call runs on one instance,
// which is restarted; the call must end (an error, never a hang), the
// server must see its end, and the same client must go on with its next
// call on whichever instance it lands.
func restartMidCall(ctx context.Context, x *mcpkitCell) error {
	c, err := newCluster(x.b.cluster.rdb, nil)
	if err != nil {
		return err
	}
	defer c.close()
	conn, err := c.endpoint().dial(x.cell.Carrier, x.cell.Era)
	if err != nil {
		return err
	}
	cl, err := client.Connect(ctx, conn, mcpkitOptions(x.cell.Era, x.id, newSeen()))
	if err != nil {
		conn.Close()
		return fmt.Errorf("connect: %w", err)
	}
	defer cl.Close()
	y := &mcpkitCell{c: cl, id: x.id, cell: x.cell, fx: c.nodes[0].fx, obs: x.obs, b: x.b}
	pr := c.probes.get(x.id)
	done := make(chan error, 1)
	go func() {
		res, err := y.call(ctx, "wait", idIn{ID: x.id})
		if err == nil {
			err = fmt.Errorf("a result: %q (isError %v)", textOf(res), res.IsError)
			err = &succeeded{err}
		}
		done <- err
	}()
	instance, err := recv(ctx, pr.started, "the tool to start")
	if err != nil {
		return err
	}
	if err := c.restart(instance); err != nil {
		return err
	}
	callErr, err := recv(ctx, done, "the call to end after the restart")
	if err != nil {
		return err
	}
	if _, ok := errors.AsType[*succeeded](callErr); ok {
		return fmt.Errorf("the call on the restarted instance ended with %v, want an error", callErr)
	}
	if _, err := recv(ctx, pr.ended, "the tool to see its end"); err != nil {
		return err
	}
	out, _, err := client.CallTool[addOut](ctx, cl, "add", addIn{A: 2, B: 3})
	if err != nil {
		return fmt.Errorf("the call after the restart (the first ended with %v): %w", callErr, err)
	}
	if out.Sum != 5 {
		return fmt.Errorf("add after the restart = %+v", out)
	}
	return nil
}

// succeeded wraps the description of a result where an error was due.
type succeeded struct{ error }
