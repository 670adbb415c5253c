package server

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonschema"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Typed elicitation: a form inferred from a Go struct, and the answer
// decoded into it.

// ErrDeclined and ErrCanceled are what an [*ElicitationError] matches
// with errors.Is when the user declined or canceled the form.
var (
	ErrDeclined = errors.New("server: the user declined")
	ErrCanceled = errors.New("server: the user canceled")
)

// ElicitationError is the error of [Ask] when the user did not accept
// the form: Action is mcp.ElicitActionDecline or mcp.ElicitActionCancel.
// It unwraps to ErrDeclined or ErrCanceled. Returned as is by a tool
// handler, it becomes a tool error (isError) with its message.
type ElicitationError struct {
	Key    string
	Action string
}

func (e *ElicitationError) Error() string {
	return fmt.Sprintf("%v the form %q", e.Unwrap(), e.Key)
}

// Unwrap returns ErrDeclined or ErrCanceled.
func (e *ElicitationError) Unwrap() error {
	if e.Action == mcp.ElicitActionCancel {
		return ErrCanceled
	}
	return ErrDeclined
}

// Ask asks the user to fill in a form inferred from T, a struct of
// string, number, integer and boolean fields (the `json` and `jsonschema`
// tags of typed tools apply: names, optional fields, title, description,
// enum, default, format, minimum, maximum, minLength, maxLength), and
// returns the answer decoded into a T:
//
//	v, err := server.Ask[Signup](req, "signup", "Please sign up")
//	if err != nil {
//		return nil, err
//	}
//
// Until the client has answered, err is an [*Input] asking for the form
// under key, to be returned as the handler's error: a 2026-07-28 client
// answers it and retries, a legacy client is asked by the server and the
// handler runs again (see [Input]); either way the answer is checked
// against the form before the handler sees it. A declined or canceled
// form is an [*ElicitationError] (errors.Is ErrDeclined or ErrCanceled).
//
// A T the form cannot express — not a struct, or with a nested struct, a
// slice, a map or a keyword elicitation forms lack — is an *Input
// recording the mistake, which fails the request with -32603 before the
// client is asked; [FormFor] reports it up front. Forms are inferred once
// per type.
//
// Several Ask calls in a row ask one form per round: every earlier
// answer is kept for the later runs (sealed in the requestState on the
// 2026 wire), so each Ask returns its answer once given, although
// Request.InputResponses holds only the last round's.
func Ask[T any](r *Request, key, message string) (T, error) {
	var v T
	form, err := formForType(reflect.TypeFor[T]())
	if err != nil {
		return v, &Input{err: fmt.Errorf("input request %q: %w", key, err)}
	}
	raw, ok := r.lookupAnswer(key)
	if !ok {
		return v, NeedInput().Elicit(key, &mcp.ElicitParams{Message: message, RequestedSchema: form})
	}
	var res struct {
		Action  string         `json:"action"`
		Content jsontext.Value `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return v, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: inputResponses[%q]: %v", key, err)
	}
	if res.Action != mcp.ElicitActionAccept {
		return v, &ElicitationError{Key: key, Action: res.Action}
	}
	if len(res.Content) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(res.Content, &v); err != nil {
		return v, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: inputResponses[%q].content: %v", key, err)
	}
	return v, nil
}

// FormFor returns the requestedSchema [Ask] sends for T, or why T cannot
// be an elicitation form. Call it at start-up (or in a test) to catch an
// unsuitable T before any request, or use it with [Input.Elicit] to ask
// for several forms in one round. The result is a fresh copy.
func FormFor[T any]() (jsontext.Value, error) {
	form, err := formForType(reflect.TypeFor[T]())
	return slices.Clone(form), err
}

type formEntry struct {
	form jsontext.Value
	err  error
}

// formTypes caches the form of each type Ask has seen (types are finite).
var formTypes sync.Map // reflect.Type → formEntry

func formForType(t reflect.Type) (jsontext.Value, error) {
	if e, ok := formTypes.Load(t); ok {
		e := e.(formEntry)
		return e.form, e.err
	}
	form, err := inferForm(t)
	if err != nil {
		err = fmt.Errorf("type %v cannot be an elicitation form: %w", t, err)
	}
	// Two first uses at once infer the same form; one is kept.
	e, _ := formTypes.LoadOrStore(t, formEntry{form, err})
	return e.(formEntry).form, e.(formEntry).err
}

// inferForm turns the inferred JSON Schema of t into a requestedSchema:
// a flat object of primitive properties (ElicitRequestFormParams), with
// only the keywords of the spec's PrimitiveSchemaDefinition.
func inferForm(t reflect.Type) (jsontext.Value, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, errors.New("not a struct")
	}
	schema, err := jsonschema.ForType(t)
	if err != nil {
		return nil, err
	}
	var top struct {
		Type       string         `json:"type"`
		Properties jsontext.Value `json:"properties"`
		Required   []string       `json:"required"`
		Defs       jsontext.Value `json:"$defs"`
		AddProps   jsontext.Value `json:"additionalProperties"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, err
	}
	if top.Type != "object" || top.Defs != nil {
		return nil, errors.New("not a flat object")
	}
	if top.AddProps != nil && string(top.AddProps) != "false" {
		return nil, errors.New("an embedded map or jsontext.Value is not a form field")
	}
	var props mcp.SchemaProperties
	d := jsontext.NewDecoder(bytes.NewReader(top.Properties))
	if _, err := d.ReadToken(); err != nil {
		return nil, err
	}
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String()
		raw, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		p, err := formProperty(raw)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		props = append(props, mcp.SchemaProperty{Name: name, Schema: p})
	}
	return json.Marshal(mcp.ElicitationSchema{Properties: props, Required: top.Required})
}

// formKeywords are the keywords of each primitive type of a form field.
var formKeywords = map[string][]string{
	"string":  {"type", "title", "description", "default", "enum", "format", "minLength", "maxLength"},
	"number":  {"type", "title", "description", "default", "minimum", "maximum"},
	"integer": {"type", "title", "description", "default", "minimum", "maximum"},
	"boolean": {"type", "title", "description", "default"},
}

var formFormats = []string{"email", "uri", "date", "date-time"}

func formProperty(raw jsontext.Value) (mcp.PrimitiveSchema, error) {
	var p mcp.PrimitiveSchema
	var kw map[string]jsontext.Value
	if err := json.Unmarshal(raw, &kw); err != nil {
		return p, err
	}
	var typ string
	if t, ok := kw["type"]; ok {
		_ = json.Unmarshal(t, &typ)
	}
	allowed, ok := formKeywords[typ]
	if !ok {
		what := typ
		if what == "" {
			what = "a field of no single type (an interface, a custom marshaler or a recursive type)"
		}
		return p, fmt.Errorf("%s is not a form field (want a string, number, integer or boolean)", what)
	}
	for k := range kw {
		if !slices.Contains(allowed, k) {
			return p, fmt.Errorf("keyword %q is not allowed on a %s form field", k, typ)
		}
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, err
	}
	if p.Format != "" && !slices.Contains(formFormats, p.Format) {
		return p, fmt.Errorf("format %q is not a form format (want email, uri, date or date-time)", p.Format)
	}
	return p, nil
}
