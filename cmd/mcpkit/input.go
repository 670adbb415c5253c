package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// asker answers the server's input requests: from flags, or by asking the
// person at the terminal. Its handlers run one at a time (the client asks
// one input request at a time), and mu keeps their output whole.
type asker struct {
	f           *clientFlags
	interactive bool
	in          *lineReader
	out         io.Writer // the terminal's prompts and notices (stderr)
	mu          *sync.Mutex
}

// lineReader reads lines from the terminal in a goroutine of its own, so
// that a question asked on the terminal gives way to the context's end
// (--timeout, Ctrl-C) instead of blocking on the read.
type lineReader struct {
	r     *bufio.Reader
	once  sync.Once
	lines chan lineOrErr
}

type lineOrErr struct {
	line string
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReader(r), lines: make(chan lineOrErr)}
}

// readLine returns the next line, with its newline; at the end of the
// input or of ctx, what was read and an error.
func (l *lineReader) readLine(ctx context.Context) (string, error) {
	l.once.Do(func() {
		go func() {
			for {
				line, err := l.r.ReadString('\n')
				l.lines <- lineOrErr{line, err}
				if err != nil {
					close(l.lines)
					return
				}
			}
		}()
	})
	select {
	case le, ok := <-l.lines:
		if !ok {
			return "", io.EOF
		}
		return le.line, le.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// options fills the input handlers of opts.
func (a *asker) options(opts *client.Options) {
	opts.ElicitHandler = a.elicit
	opts.ElicitationURL = true
	opts.ElicitationDefaults = true
	opts.CreateMessageHandler = a.sample
	opts.ListRootsHandler = a.listRoots
}

func (a *asker) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p.EffectiveMode() == mcp.ElicitModeURL {
		return a.elicitURL(ctx, p)
	}
	schema, err := mcp.ParseElicitationSchema(p.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("the server's elicitation schema: %w", err)
	}
	switch {
	case a.f.decline:
		fmt.Fprintf(a.out, "mcpkit: declining the server's question %q (--decline)\n", p.Message)
		return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
	case len(a.f.answers) > 0 || a.f.acceptDefaults:
		content := map[string]any{}
		for _, kv := range a.f.answers {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, usageErr("--answer %q is not key=value", kv)
			}
			prop := findProperty(schema, k)
			if prop == nil {
				return nil, usageErr("--answer %s: the form has no field %q (fields: %s)", kv, k, fieldNames(schema))
			}
			val, err := convertAnswer(&prop.Schema, v)
			if err != nil {
				return nil, usageErr("--answer %s: %v", kv, err)
			}
			content[k] = val
		}
		content = client.ApplyElicitationDefaults(p.RequestedSchema, content)
		for _, r := range schema.Required {
			if _, ok := content[r]; !ok {
				// The command line is right; the form asks for more than
				// it says: not a usage error.
				return nil, &exitError{code: exitInput, err: fmt.Errorf(
					"--accept-defaults cannot fill the server's form %q: its required field %q has no default; give it with --answer %s=VALUE",
					p.Message, r, r)}
			}
		}
		return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: content}, nil
	case a.interactive:
		return a.askForm(ctx, p, schema)
	}
	fmt.Fprintf(a.out, "mcpkit: declining the server's question %q: stdin is not a terminal (use --answer, --accept-defaults or --decline)\n", p.Message)
	return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
}

func (a *asker) elicitURL(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	fmt.Fprintf(a.out, "\nThe server asks you to open a web page:\n  %s\n  URL: %s\n", p.Message, p.URL)
	if a.f.decline || !a.interactive {
		fmt.Fprintln(a.out, "mcpkit: declined (consent needs an interactive terminal)")
		return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
	}
	fmt.Fprint(a.out, "Open it yourself and continue? [y/N] ")
	line, err := a.in.readLine(ctx)
	if err != nil && line == "" {
		return &mcp.ElicitResult{Action: mcp.ElicitActionCancel}, nil
	}
	if ans := strings.ToLower(strings.TrimSpace(line)); ans == "y" || ans == "yes" {
		return &mcp.ElicitResult{Action: mcp.ElicitActionAccept}, nil
	}
	return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
}

// askForm asks for each field of the form in turn.
func (a *asker) askForm(ctx context.Context, p *mcp.ElicitParams, schema *mcp.ElicitationSchema) (*mcp.ElicitResult, error) {
	hasDefault := slices.ContainsFunc(schema.Properties, func(p mcp.SchemaProperty) bool { return p.Schema.Default != nil })
	if hasDefault {
		fmt.Fprintf(a.out, "\nThe server asks: %s\n(Enter takes the default shown in brackets; type !decline or !cancel to refuse)\n", p.Message)
	} else {
		fmt.Fprintf(a.out, "\nThe server asks: %s\n(type !decline or !cancel to refuse)\n", p.Message)
	}
	content := map[string]any{}
	for _, prop := range schema.Properties {
		ps := &prop.Schema
		required := slices.Contains(schema.Required, prop.Name)
		label := prop.Name
		if ps.Title != "" {
			label = ps.Title + " (" + prop.Name + ")"
		}
		fmt.Fprintf(a.out, "\n%s", label)
		if required {
			fmt.Fprint(a.out, " *required*")
		}
		fmt.Fprintf(a.out, " [%s]\n", describeType(ps))
		if ps.Description != "" {
			fmt.Fprintf(a.out, "  %s\n", ps.Description)
		}
		if choices := enumChoices(ps); len(choices) > 0 {
			fmt.Fprintf(a.out, "  choices: %s\n", strings.Join(choices, ", "))
		}
		if rules := constraints(ps); len(rules) > 0 {
			fmt.Fprintf(a.out, "  must be: %s\n", strings.Join(rules, "; "))
		}
		if !required && ps.Default == nil {
			fmt.Fprintln(a.out, "  optional: Enter leaves it out")
		}
		for {
			// A default is shown only when the server gave one: a
			// required field without one has nothing in brackets.
			if ps.Default != nil {
				fmt.Fprintf(a.out, "%s [%v]: ", prop.Name, formatDefault(ps.Default))
			} else {
				fmt.Fprintf(a.out, "%s: ", prop.Name)
			}
			line, err := a.in.readLine(ctx)
			if err != nil && line == "" {
				fmt.Fprintln(a.out)
				return &mcp.ElicitResult{Action: mcp.ElicitActionCancel}, nil
			}
			line = strings.TrimSpace(line)
			switch line {
			case "!decline":
				return &mcp.ElicitResult{Action: mcp.ElicitActionDecline}, nil
			case "!cancel":
				return &mcp.ElicitResult{Action: mcp.ElicitActionCancel}, nil
			case "":
				if ps.Default != nil {
					content[prop.Name] = ps.Default
					break
				}
				if required {
					fmt.Fprintln(a.out, "  a value is required")
					continue
				}
			default:
				v, err := convertAnswer(ps, line)
				if err != nil {
					fmt.Fprintf(a.out, "  %v\n", err)
					continue
				}
				content[prop.Name] = v
			}
			break
		}
	}
	return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: content}, nil
}

func (a *asker) sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	reply := a.f.samplingReply
	if !a.f.samplingSet {
		if !a.interactive {
			return nil, &exitError{code: exitProtocol, err: errors.New("the server asked for sampling; answer it with --sampling-reply TEXT")}
		}
		var ok bool
		var err error
		if reply, ok, err = a.askSampling(ctx, p); err != nil {
			return nil, err
		} else if !ok {
			return nil, errors.New("the user declined the sampling request")
		}
	}
	return &mcp.CreateMessageResult{
		Role:       mcp.RoleAssistant,
		Content:    mcp.NewSamplingContent(&mcp.TextContent{Text: reply}),
		Model:      "mcpkit-cli",
		StopReason: "endTurn",
	}, nil
}

// askSampling shows a sampling request on the terminal and reads the
// reply the person types in the model's place: lines up to an empty one.
// ok is false when they decline (!decline, or the end of the input).
func (a *asker) askSampling(ctx context.Context, p *mcp.CreateMessageParams) (reply string, ok bool, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.out
	fmt.Fprintf(w, "\nThe server asks for a model's reply (sampling, at most %d tokens).\n", p.MaxTokens)
	if p.SystemPrompt != "" {
		fmt.Fprintf(w, "  system: %s\n", indentLines(p.SystemPrompt))
	}
	for _, m := range p.Messages {
		for _, b := range m.Content.Blocks {
			fmt.Fprintf(w, "  %s: %s\n", m.Role, indentLines(describeBlock(b)))
		}
	}
	fmt.Fprint(w, "Type the reply, ending with an empty line (!decline to refuse):\n> ")
	var lines []string
	for {
		line, err := a.in.readLine(ctx)
		if err != nil && line == "" {
			if ctx.Err() != nil {
				return "", false, ctx.Err()
			}
			fmt.Fprintln(w)
			if len(lines) > 0 {
				return strings.Join(lines, "\n"), true, nil
			}
			return "", false, nil
		}
		line = strings.TrimRight(line, "\r\n")
		if len(lines) == 0 && strings.TrimSpace(line) == "!decline" {
			return "", false, nil
		}
		if strings.TrimSpace(line) == "" {
			if len(lines) == 0 {
				fmt.Fprint(w, "  the reply is empty: type it, or !decline\n> ")
				continue
			}
			return strings.Join(lines, "\n"), true, nil
		}
		lines = append(lines, line)
		fmt.Fprint(w, "> ")
	}
}

// describeBlock is a content block as one text for the terminal.
func describeBlock(b mcp.Content) string {
	switch b := b.(type) {
	case *mcp.TextContent:
		return b.Text
	case *mcp.ImageContent:
		return "<image: " + describeBytes(b.Data, b.MIMEType) + ">"
	case *mcp.AudioContent:
		return "<audio: " + describeBytes(b.Data, b.MIMEType) + ">"
	}
	raw, _ := json.Marshal(b)
	return string(raw)
}

// indentLines indents the lines after the first of s for a "  role: "
// prefix.
func indentLines(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

func (a *asker) listRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	res := &mcp.ListRootsResult{Roots: []mcp.Root{}}
	for _, r := range a.f.roots {
		res.Roots = append(res.Roots, mcp.Root{URI: r})
	}
	return res, nil
}

func findProperty(s *mcp.ElicitationSchema, name string) *mcp.SchemaProperty {
	for i := range s.Properties {
		if s.Properties[i].Name == name {
			return &s.Properties[i]
		}
	}
	return nil
}

func fieldNames(s *mcp.ElicitationSchema) string {
	var names []string
	for _, p := range s.Properties {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// constraints says, before any answer, what a field's value must satisfy
// beyond its type and choices: bounds, lengths, pattern, format, the
// number of items.
func constraints(ps *mcp.PrimitiveSchema) []string {
	var out []string
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case ps.Minimum != nil && ps.Maximum != nil:
		out = append(out, "from "+num(*ps.Minimum)+" to "+num(*ps.Maximum))
	case ps.Minimum != nil:
		out = append(out, "at least "+num(*ps.Minimum))
	case ps.Maximum != nil:
		out = append(out, "at most "+num(*ps.Maximum))
	}
	switch {
	case ps.MinLength != nil && ps.MaxLength != nil:
		out = append(out, fmt.Sprintf("%d to %d characters", *ps.MinLength, *ps.MaxLength))
	case ps.MinLength != nil:
		out = append(out, fmt.Sprintf("at least %d characters", *ps.MinLength))
	case ps.MaxLength != nil:
		out = append(out, fmt.Sprintf("at most %d characters", *ps.MaxLength))
	}
	if ps.Pattern != "" {
		out = append(out, "matching the pattern "+ps.Pattern)
	}
	switch ps.Format {
	case "":
	case "email":
		out = append(out, "an email address (format email)")
	case "uri":
		out = append(out, "a URI such as https://example.com/ (format uri)")
	case "date":
		out = append(out, "a date such as 2026-07-28 (format date)")
	case "date-time":
		out = append(out, "a date and time such as 2026-07-28T09:30:00Z (format date-time)")
	default:
		out = append(out, "format "+ps.Format)
	}
	switch {
	case ps.MinItems != nil && ps.MaxItems != nil:
		out = append(out, fmt.Sprintf("%d to %d choices", *ps.MinItems, *ps.MaxItems))
	case ps.MinItems != nil:
		out = append(out, fmt.Sprintf("at least %d choices", *ps.MinItems))
	case ps.MaxItems != nil:
		out = append(out, fmt.Sprintf("at most %d choices", *ps.MaxItems))
	}
	return out
}

func describeType(ps *mcp.PrimitiveSchema) string {
	switch {
	case ps.Type == "array":
		return "list, comma-separated"
	case ps.Type == "boolean":
		return "yes/no"
	}
	return ps.Type // a format is told with the constraints
}

// enumChoices lists the allowed values of an enum field, with titles.
func enumChoices(ps *mcp.PrimitiveSchema) []string {
	var out []string
	add := func(opts []mcp.EnumOption) {
		for _, o := range opts {
			out = append(out, o.Const+" ("+o.Title+")")
		}
	}
	switch {
	case len(ps.OneOf) > 0:
		add(ps.OneOf)
	case len(ps.Enum) > 0:
		for i, v := range ps.Enum {
			if i < len(ps.EnumNames) {
				v += " (" + ps.EnumNames[i] + ")"
			}
			out = append(out, v)
		}
	case ps.Items != nil && len(ps.Items.AnyOf) > 0:
		add(ps.Items.AnyOf)
	case ps.Items != nil:
		out = append(out, ps.Items.Enum...)
	}
	return out
}

func allowed(ps *mcp.PrimitiveSchema) []string {
	var out []string
	switch {
	case len(ps.OneOf) > 0:
		for _, o := range ps.OneOf {
			out = append(out, o.Const)
		}
	case len(ps.Enum) > 0:
		out = ps.Enum
	case ps.Items != nil && len(ps.Items.AnyOf) > 0:
		for _, o := range ps.Items.AnyOf {
			out = append(out, o.Const)
		}
	case ps.Items != nil:
		out = ps.Items.Enum
	}
	return out
}

func formatDefault(v any) string {
	if l, ok := v.([]any); ok {
		var s []string
		for _, e := range l {
			s = append(s, fmt.Sprint(e))
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprint(v)
}

// convertAnswer turns the text s into a value of the field's type, checked
// against its enum and bounds.
func convertAnswer(ps *mcp.PrimitiveSchema, s string) (any, error) {
	choices := allowed(ps)
	switch ps.Type {
	case "number", "integer":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		if ps.Type == "integer" && f != float64(int64(f)) {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		if ps.Minimum != nil && f < *ps.Minimum {
			return nil, fmt.Errorf("%v is below the minimum %v", f, *ps.Minimum)
		}
		if ps.Maximum != nil && f > *ps.Maximum {
			return nil, fmt.Errorf("%v is above the maximum %v", f, *ps.Maximum)
		}
		if ps.Type == "integer" {
			return int64(f), nil
		}
		return f, nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not yes or no", s)
	case "array":
		var out []any
		for _, v := range strings.Split(s, ",") {
			v = strings.TrimSpace(v)
			if len(choices) > 0 && !slices.Contains(choices, v) {
				return nil, fmt.Errorf("%q is not one of %s", v, strings.Join(choices, ", "))
			}
			out = append(out, v)
		}
		if ps.MinItems != nil && int64(len(out)) < *ps.MinItems {
			return nil, fmt.Errorf("choose at least %d", *ps.MinItems)
		}
		if ps.MaxItems != nil && int64(len(out)) > *ps.MaxItems {
			return nil, fmt.Errorf("choose at most %d", *ps.MaxItems)
		}
		return out, nil
	}
	if len(choices) > 0 && !slices.Contains(choices, s) {
		return nil, fmt.Errorf("%q is not one of %s", s, strings.Join(choices, ", "))
	}
	n := int64(len([]rune(s)))
	if ps.MinLength != nil && n < *ps.MinLength {
		return nil, fmt.Errorf("at least %d characters, please", *ps.MinLength)
	}
	if ps.MaxLength != nil && n > *ps.MaxLength {
		return nil, fmt.Errorf("at most %d characters, please", *ps.MaxLength)
	}
	// A pattern Go cannot compile (ECMA-262 has constructs RE2 lacks) is
	// shown but left to the server to check.
	if re, err := regexp.Compile(ps.Pattern); ps.Pattern != "" && err == nil && !re.MatchString(s) {
		return nil, fmt.Errorf("%q does not match the pattern %s", s, ps.Pattern)
	}
	return s, nil
}

// parseArgs turns key=value arguments into a map: a value that parses as
// JSON is that JSON value, anything else a string.
func parseArgs(args []string) (map[string]any, error) {
	m := map[string]any{}
	for _, kv := range args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErr("argument %q is not key=value", kv)
		}
		var val any
		if err := json.Unmarshal([]byte(v), &val); err != nil {
			val = v
		}
		m[k] = val
	}
	return m, nil
}
