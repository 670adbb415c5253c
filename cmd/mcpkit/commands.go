package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// cli is one run of a client command.
type cli struct {
	f      clientFlags
	stdout io.Writer
	stderr io.Writer
	mu     sync.Mutex // serializes writes to stderr from handlers
	// progressLive: a progress line is drawn on the terminal (\r updates).
	progressTTY  bool
	progressLive bool
	progressLine string // the live progress line, redrawn after a log message
	// legacyNotes carries the change notifications of a legacy listen.
	legacyNotes chan string
	// asTask: call --task (run the call as a task).
	asTask bool
	// saved: binary contents went to the --out file (saveErr: or failed).
	saved   bool
	saveErr error
	// reconnect opens a second, plain connection to the same target in
	// the given era ("legacy" or "modern"): inspect probes with it the
	// era the first connection did not use.
	reconnect func(ctx context.Context, era string) (*client.Client, error)
	// side, for a stdio target, asks the server a question of the other
	// era on the same process (inspect), so the command runs once.
	side *sideConn
}

func runClient(ctx context.Context, cmd string, args []string, stdout, stderr io.Writer) error {
	c := &cli{stdout: stdout, stderr: stderr}
	fs := flag.NewFlagSet("mcpkit "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: see 'mcpkit help'. Flags of mcpkit %s:\n", cmd)
		fs.PrintDefaults()
	}
	c.f.register(fs)
	var (
		completePrompt, completeResource string
		listenTools, listenPrompts       bool
		listenResources                  bool
		listenURIs                       multiFlag
		skillsFetchDir                   string
	)
	switch cmd {
	case "call":
		fs.BoolVar(&c.asTask, "task", false, "run the call as a task (tools that require one are always run as tasks)")
	case "complete":
		fs.StringVar(&completePrompt, "prompt", "", "complete an argument of prompt `NAME`")
		fs.StringVar(&completeResource, "resource", "", "complete a variable of resource template `URI`")
	case "listen":
		fs.BoolVar(&listenTools, "tools", false, "tools list changes")
		fs.BoolVar(&listenPrompts, "prompts", false, "prompts list changes")
		fs.BoolVar(&listenResources, "resources", false, "resources list changes")
		fs.Var(&listenURIs, "resource", "updates of resource `URI` (repeatable)")
	case "skills":
		fs.StringVar(&skillsFetchDir, "fetch", "", "write the skill's files, verified, into the new directory `DIR`")
	}
	pos, command, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	t, pos, err := parseTarget(pos, command)
	if err != nil {
		return err
	}
	if n := countTrue(c.f.decline, c.f.acceptDefaults || len(c.f.answers) > 0); n > 1 {
		return usageErr("--decline excludes --answer and --accept-defaults")
	}
	if _, err := c.f.protocolVersion(); err != nil {
		return err
	}
	// Check the arguments before connecting.
	var run func(context.Context, *client.Client) error
	switch cmd {
	case "inspect":
		if len(pos) != 0 {
			return usageErr("inspect takes only TARGET")
		}
		run = c.inspect
	case "call":
		if len(pos) == 0 {
			return usageErr("call needs TOOL")
		}
		p := &mcp.CallToolParams{Name: pos[0]}
		if rest := pos[1:]; len(rest) == 1 && strings.HasPrefix(strings.TrimSpace(rest[0]), "{") {
			v := jsontext.Value(rest[0])
			if !v.IsValid() {
				return usageErr("the arguments are not valid JSON: %s", rest[0])
			}
			p.Arguments = v
		} else if len(rest) > 0 {
			m, err := parseArgs(rest)
			if err != nil {
				return err
			}
			if p.Arguments, err = json.Marshal(m); err != nil {
				return err
			}
		}
		run = func(ctx context.Context, cl *client.Client) error { return c.call(ctx, cl, p) }
	case "read":
		if len(pos) != 1 {
			return usageErr("read needs exactly one URI")
		}
		run = func(ctx context.Context, cl *client.Client) error { return c.read(ctx, cl, pos[0]) }
	case "prompt":
		if len(pos) == 0 {
			return usageErr("prompt needs NAME")
		}
		// Prompt arguments are strings: they are sent as typed.
		p := &mcp.GetPromptParams{Name: pos[0], Arguments: map[string]string{}}
		for _, kv := range pos[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usageErr("argument %q is not key=value", kv)
			}
			p.Arguments[k] = v
		}
		run = func(ctx context.Context, cl *client.Client) error { return c.prompt(ctx, cl, p) }
	case "complete":
		if (completePrompt == "") == (completeResource == "") {
			return usageErr("complete needs exactly one of --prompt NAME and --resource URI")
		}
		if len(pos) != 2 {
			return usageErr("complete needs ARG and VALUE")
		}
		p := &mcp.CompleteParams{Argument: mcp.CompleteArgument{Name: pos[0], Value: pos[1]}}
		if completePrompt != "" {
			p.Ref = mcp.CompleteReference{Type: mcp.RefPrompt, Name: completePrompt}
		} else {
			p.Ref = mcp.CompleteReference{Type: mcp.RefResource, URI: completeResource}
		}
		run = func(ctx context.Context, cl *client.Client) error { return c.complete(ctx, cl, p) }
	case "listen":
		if len(pos) != 0 {
			return usageErr("listen takes only TARGET and flags")
		}
		filter := mcp.SubscriptionFilter{ToolsListChanged: listenTools, PromptsListChanged: listenPrompts,
			ResourcesListChanged: listenResources, ResourceSubscriptions: listenURIs}
		if !listenTools && !listenPrompts && !listenResources && len(listenURIs) == 0 {
			filter.ToolsListChanged, filter.PromptsListChanged, filter.ResourcesListChanged = true, true, true
		}
		run = func(ctx context.Context, cl *client.Client) error { return c.listen(ctx, cl, filter) }
	case "skills":
		if run, err = c.skillsRun(pos, skillsFetchDir); err != nil {
			return err
		}
	}

	if c.f.timeout < 0 {
		return usageErr("--timeout must not be negative")
	}
	if c.f.out != "" && (cmd != "read" && cmd != "call" || c.f.json) {
		return usageErr("--out applies to read and call, without --json")
	}
	if c.f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.f.timeout, errTimeout)
		defer cancel()
		err := c.runConnected(ctx, cmd, t, run, stdout, stderr)
		if err != nil && errors.Is(context.Cause(ctx), errTimeout) {
			return &exitError{code: exitConn, err: fmt.Errorf("timed out after %s", c.f.timeout)}
		}
		if err == nil && cmd == "listen" && errors.Is(context.Cause(ctx), errTimeout) {
			return &exitError{code: exitConn, err: fmt.Errorf("timed out after %s", c.f.timeout)}
		}
		return err
	}
	return c.runConnected(ctx, cmd, t, run, stdout, stderr)
}

// errTimeout is the cause of the context of a command that ran out of
// its --timeout.
var errTimeout = errors.New("--timeout")

// runConnected connects to t and runs the command.
func (c *cli) runConnected(ctx context.Context, cmd string, t target, run func(context.Context, *client.Client) error, stdout, stderr io.Writer) error {
	c.progressTTY = isTerminal(os.Stderr) && stderr == io.Writer(os.Stderr)
	a := &asker{
		f:           &c.f,
		interactive: stdinIsTerminal() && !c.f.decline && !c.f.acceptDefaults && len(c.f.answers) == 0,
		in:          newLineReader(os.Stdin),
		out:         stderr,
		mu:          &c.mu,
	}
	opts := client.Options{OnLog: c.onLog}
	a.options(&opts)
	var notes chan string
	if cmd == "listen" {
		notes = make(chan string, 64)
		send := func(s string) {
			select {
			case notes <- s:
			default:
			}
		}
		opts.OnToolsListChanged = func(context.Context) { send(mcp.NotificationToolsListChanged) }
		opts.OnPromptsListChanged = func(context.Context) { send(mcp.NotificationPromptsListChanged) }
		opts.OnResourcesListChanged = func(context.Context) { send(mcp.NotificationResourcesListChanged) }
		opts.OnResourceUpdated = func(_ context.Context, uri string) { send(mcp.NotificationResourcesUpdated + " " + uri) }
		c.legacyNotes = notes
	}
	c.reconnect = func(ctx context.Context, era string) (*client.Client, error) {
		f := c.f
		f.era, f.logLevel = era, "off"
		w := stderr // an OAuth login may need to speak
		if t.url == "" {
			w = io.Discard // the server's own log, once is enough
		}
		return connect(ctx, t, &f, client.Options{}, w)
	}
	cl, side, err := connectSide(ctx, t, &c.f, opts, stderr)
	if err != nil {
		return err
	}
	c.side = side
	defer cl.Close()
	err = run(ctx, cl)
	c.endProgress()
	return err
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// printJSON writes v as indented JSON.
func (c *cli) printJSON(v any) error {
	b, err := json.Marshal(v, jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "%s\n", b)
	return err
}

func compact(v jsontext.Value) string {
	if len(v) == 0 {
		return "{}"
	}
	w := v.Clone()
	if err := w.Compact(); err != nil {
		return string(v)
	}
	return string(w)
}

func (c *cli) onLog(ctx context.Context, p *mcp.LoggingMessageParams) {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := c.progressLive
	c.clearProgressLocked()
	defer func() {
		if live {
			fmt.Fprint(c.stderr, c.progressLine)
			c.progressLive = true
		}
	}()
	data, ok := p.Data.(string)
	if !ok {
		// Keys sorted: the same data prints the same way every time.
		b, _ := json.Marshal(p.Data, json.Deterministic(true))
		data = string(b)
	}
	if p.Logger != "" {
		fmt.Fprintf(c.stderr, "[%s] %s: %s\n", p.Level, p.Logger, data)
	} else {
		fmt.Fprintf(c.stderr, "[%s] %s\n", p.Level, data)
	}
}

func (c *cli) onProgress(p *mcp.ProgressParams) {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := fmt.Sprintf("%g", p.Progress)
	bar := ""
	if p.Total != nil && *p.Total > 0 {
		line += fmt.Sprintf("/%g", *p.Total)
		const width = 20
		n := min(width, max(0, int(p.Progress / *p.Total * width)))
		bar = "[" + strings.Repeat("#", n) + strings.Repeat("-", width-n) + "] "
	}
	if p.Message != "" {
		line += " " + p.Message
	}
	if c.progressTTY {
		c.progressLine = bar + line
		fmt.Fprintf(c.stderr, "\r\033[K%s", c.progressLine)
		c.progressLive = true
		return
	}
	fmt.Fprintf(c.stderr, "progress: %s\n", line)
}

func (c *cli) clearProgressLocked() {
	if c.progressLive {
		fmt.Fprint(c.stderr, "\r\033[K")
		c.progressLive = false
	}
}

func (c *cli) endProgress() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.progressLive {
		fmt.Fprintln(c.stderr)
		c.progressLive = false
	}
}

func (c *cli) inspect(ctx context.Context, cl *client.Client) error {
	revs, supported, notes, err := c.revisions(ctx, cl)
	if err != nil {
		return err
	}
	caps := cl.ServerCapabilities()
	var (
		tools     []mcp.Tool
		prompts   []mcp.Prompt
		resources []mcp.Resource
		templates []mcp.ResourceTemplate
	)
	if caps.Tools != nil {
		for t, err := range cl.Tools(ctx) {
			if err != nil {
				return fmt.Errorf("listing tools: %w", err)
			}
			tools = append(tools, t)
		}
	}
	if caps.Prompts != nil {
		for p, err := range cl.Prompts(ctx) {
			if err != nil {
				return fmt.Errorf("listing prompts: %w", err)
			}
			prompts = append(prompts, p)
		}
	}
	if caps.Resources != nil {
		for r, err := range cl.Resources(ctx) {
			if err != nil {
				return fmt.Errorf("listing resources: %w", err)
			}
			resources = append(resources, r)
		}
		for r, err := range cl.ResourceTemplates(ctx) {
			if err != nil {
				return fmt.Errorf("listing resource templates: %w", err)
			}
			templates = append(templates, r)
		}
	}
	if c.f.json {
		return c.printJSON(struct {
			Era               string                 `json:"era"`
			ProtocolVersion   string                 `json:"protocolVersion"`
			SupportedVersions []string               `json:"supportedVersions,omitempty"`
			Revisions         []revision             `json:"revisions"`
			RevisionNotes     []string               `json:"revisionNotes,omitempty"`
			ServerInfo        mcp.Implementation     `json:"serverInfo"`
			Capabilities      mcp.ServerCapabilities `json:"capabilities"`
			Instructions      string                 `json:"instructions,omitzero"`
			Tools             []mcp.Tool             `json:"tools"`
			Prompts           []mcp.Prompt           `json:"prompts"`
			Resources         []mcp.Resource         `json:"resources"`
			ResourceTemplates []mcp.ResourceTemplate `json:"resourceTemplates"`
		}{cl.Era().String(), cl.ProtocolVersion(), supported, revs, notes, cl.ServerInfo(), caps, cl.Instructions(),
			orEmpty(tools), orEmpty(prompts), orEmpty(resources), orEmpty(templates)})
	}
	w := c.stdout
	info := cl.ServerInfo()
	fmt.Fprintf(w, "server:       %s %s\n", info.Name, info.Version)
	fmt.Fprintf(w, "era:          %s (protocol %s)\n", cl.Era(), cl.ProtocolVersion())
	var rs []string
	for _, r := range revs {
		rs = append(rs, fmt.Sprintf("%s (%s, via %s)", r.Version, r.Era, r.Via))
	}
	fmt.Fprintf(w, "revisions:    %s\n", strings.Join(rs, ", "))
	for _, n := range notes {
		fmt.Fprintf(w, "              %s\n", n)
	}
	capsJSON, _ := json.Marshal(caps)
	fmt.Fprintf(w, "capabilities: %s\n", capsJSON)
	if ins := cl.Instructions(); ins != "" {
		fmt.Fprintf(w, "instructions: %s\n", ins)
	}
	fmt.Fprintf(w, "\ntools (%d):\n", len(tools))
	for _, t := range tools {
		fmt.Fprintf(w, "  %s", t.Name)
		if t.Title != "" {
			fmt.Fprintf(w, " (%s)", t.Title)
		}
		if t.Description != "" {
			fmt.Fprintf(w, ": %s", t.Description)
		}
		fmt.Fprintf(w, "\n    input:  %s\n", compact(t.InputSchema))
		if ts := taskSupport(&t); ts != "" {
			fmt.Fprintf(w, "    task:   %s\n", ts)
		}
		if len(t.OutputSchema) > 0 {
			fmt.Fprintf(w, "    output: %s\n", compact(t.OutputSchema))
		}
	}
	fmt.Fprintf(w, "\nprompts (%d):\n", len(prompts))
	for _, p := range prompts {
		var args []string
		for _, a := range p.Arguments {
			if a.Required {
				args = append(args, a.Name+"*")
			} else {
				args = append(args, a.Name)
			}
		}
		fmt.Fprintf(w, "  %s(%s)", p.Name, strings.Join(args, ", "))
		if p.Description != "" {
			fmt.Fprintf(w, ": %s", p.Description)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nresources (%d):\n", len(resources))
	for _, r := range resources {
		fmt.Fprintf(w, "  %s  %s%s%s\n", r.URI, r.Name, optParen(r.MIMEType), optColon(r.Description))
	}
	fmt.Fprintf(w, "\nresource templates (%d):\n", len(templates))
	for _, r := range templates {
		fmt.Fprintf(w, "  %s  %s%s%s\n", r.URITemplate, r.Name, optParen(r.MIMEType), optColon(r.Description))
	}
	return nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func optParen(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func optColon(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func (c *cli) call(ctx context.Context, cl *client.Client, p *mcp.CallToolParams) error {
	res, err := c.callTool(ctx, cl, p)
	c.endProgress()
	if err != nil {
		return err
	}
	if c.f.json {
		if err := c.printJSON(res); err != nil {
			return err
		}
	} else {
		// A tool error (isError) is the tool's failure, not its output:
		// it goes to stderr under a label, and the exit code is
		// exitToolErr. With --json the result stays whole on stdout.
		out := c.stdout
		if res.IsError {
			out = c.stderr
			fmt.Fprintf(c.stderr, "mcpkit: the tool %q reported an error (isError):\n", p.Name)
		}
		c.printContents(out, res.Content)
		if len(res.Content) == 0 && len(res.StructuredContent) > 0 {
			fmt.Fprintln(out, string(res.StructuredContent))
		}
		if c.saveErr != nil {
			return &exitError{code: exitConn, err: c.saveErr}
		}
	}
	if res.IsError {
		return errToolError
	}
	return nil
}

func (c *cli) printContents(w io.Writer, cs mcp.Contents) {
	for _, b := range cs {
		c.printContent(w, b)
	}
}

func (c *cli) printContent(w io.Writer, b mcp.Content) {
	switch b := b.(type) {
	case *mcp.TextContent:
		fmt.Fprintln(w, b.Text)
		return
	case *mcp.ImageContent:
		c.printBinary(w, "image", b.Data, b.MIMEType, "")
		return
	case *mcp.AudioContent:
		c.printBinary(w, "audio", b.Data, b.MIMEType, "")
		return
	case *mcp.EmbeddedResource:
		switch rc := b.Resource.(type) {
		case *mcp.TextResourceContents:
			fmt.Fprintln(w, rc.Text)
			return
		case *mcp.BlobResourceContents:
			c.printBinary(w, "blob", rc.Blob, rc.MIMEType, rc.URI)
			return
		}
	}
	raw, _ := json.Marshal(b)
	fmt.Fprintln(w, string(raw))
}

// printBinary shows binary contents as their size, MIME type and first
// bytes in hex, or saves the first such contents to the --out file.
func (c *cli) printBinary(w io.Writer, kind string, data []byte, mimeType, uri string) {
	from := ""
	if uri != "" {
		from = " from " + uri
	}
	if c.f.out != "" && !c.saved {
		c.saved = true
		if err := os.WriteFile(c.f.out, data, 0o644); err != nil {
			c.saveErr = fmt.Errorf("--out: %w", err)
			return
		}
		fmt.Fprintf(w, "<%s: %d bytes of %s%s saved to %s>\n", kind, len(data), orUnknown(mimeType), from, c.f.out)
		return
	}
	fmt.Fprintf(w, "<%s: %s%s>\n", kind, describeBytes(data, mimeType), from)
}

func orUnknown(mimeType string) string {
	if mimeType == "" {
		return "unknown type"
	}
	return mimeType
}

// describeBytes is the size, MIME type and first bytes (in hex) of data.
func describeBytes(data []byte, mimeType string) string {
	const head = 16
	s := fmt.Sprintf("%d bytes of %s", len(data), orUnknown(mimeType))
	if len(data) == 0 {
		return s
	}
	n := min(len(data), head)
	hex := fmt.Sprintf("% x", data[:n])
	if len(data) > n {
		hex += " ..."
	}
	return s + ": " + hex
}

func (c *cli) read(ctx context.Context, cl *client.Client, uri string) (err error) {
	res, err := cl.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return err
	}
	if c.f.json {
		return c.printJSON(res)
	}
	defer func() {
		if err == nil {
			err = c.saveErr
		}
	}()
	for _, rc := range res.Contents {
		switch rc := rc.(type) {
		case *mcp.TextResourceContents:
			fmt.Fprintln(c.stdout, rc.Text)
		case *mcp.BlobResourceContents:
			c.printBinary(c.stdout, "blob", rc.Blob, rc.MIMEType, rc.URI)
		default:
			raw, _ := json.Marshal(rc)
			fmt.Fprintln(c.stdout, string(raw))
		}
	}
	return nil
}

func (c *cli) prompt(ctx context.Context, cl *client.Client, p *mcp.GetPromptParams) error {
	res, err := cl.GetPrompt(ctx, p)
	if err != nil {
		return err
	}
	if c.f.json {
		return c.printJSON(res)
	}
	if res.Description != "" {
		fmt.Fprintf(c.stdout, "# %s\n", res.Description)
	}
	for _, m := range res.Messages {
		fmt.Fprintf(c.stdout, "%s: ", m.Role)
		c.printContent(c.stdout, m.Content)
	}
	return nil
}

func (c *cli) complete(ctx context.Context, cl *client.Client, p *mcp.CompleteParams) error {
	res, err := cl.Complete(ctx, p)
	if err != nil {
		return err
	}
	if c.f.json {
		return c.printJSON(res)
	}
	for _, v := range res.Completion.Values {
		fmt.Fprintln(c.stdout, v)
	}
	if res.Completion.HasMore {
		fmt.Fprintln(c.stderr, "(more values exist)")
	}
	return nil
}

func (c *cli) listen(ctx context.Context, cl *client.Client, filter mcp.SubscriptionFilter) error {
	if cl.Era() == client.EraModern {
		sub, err := cl.Listen(ctx, filter)
		if err != nil {
			return err
		}
		defer sub.Close()
		agreed, _ := json.Marshal(sub.Filter())
		fmt.Fprintf(c.stderr, "mcpkit: listening (modern subscription %s); Ctrl-C to stop\n", agreed)
		for n := range sub.Notifications() {
			c.printNote(n.Method, n.URI, n.Params)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := sub.Err(); err != nil {
			return err
		}
		fmt.Fprintln(c.stderr, "mcpkit: the server ended the subscription")
		return nil
	}
	for _, uri := range filter.ResourceSubscriptions {
		if err := cl.Subscribe(ctx, uri); err != nil {
			return fmt.Errorf("subscribing to %s: %w", uri, err)
		}
	}
	fmt.Fprintln(c.stderr, "mcpkit: listening (legacy notifications); Ctrl-C to stop")
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-cl.Done():
			if err := cl.Wait(); err != nil {
				return &exitError{code: exitConn, err: err}
			}
			fmt.Fprintln(c.stderr, "mcpkit: the server closed the connection")
			return nil
		case n := <-c.legacyNotes:
			method, uri, _ := strings.Cut(n, " ")
			if !wanted(filter, method, uri) {
				continue
			}
			c.printNote(method, uri, nil)
		}
	}
}

func wanted(f mcp.SubscriptionFilter, method, uri string) bool {
	switch method {
	case mcp.NotificationToolsListChanged:
		return f.ToolsListChanged
	case mcp.NotificationPromptsListChanged:
		return f.PromptsListChanged
	case mcp.NotificationResourcesListChanged:
		return f.ResourcesListChanged
	case mcp.NotificationResourcesUpdated:
		for _, u := range f.ResourceSubscriptions {
			if u == uri {
				return true
			}
		}
	}
	return false
}

func (c *cli) printNote(method, uri string, params jsontext.Value) {
	if c.f.json {
		_ = c.printJSONLine(map[string]any{"method": method, "uri": uri})
		return
	}
	if uri != "" {
		fmt.Fprintf(c.stdout, "%s %s\n", method, uri)
		return
	}
	fmt.Fprintln(c.stdout, method)
}

func (c *cli) printJSONLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "%s\n", b)
	return err
}
