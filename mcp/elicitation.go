package mcp

import (
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Elicitation modes of ElicitParams.Mode.
const (
	ElicitModeForm = "form"
	ElicitModeURL  = "url"
)

// ElicitParams are the params of elicitation/create in either mode, sent as a
// request (2025) or embedded in an InputRequest (2026).
type ElicitParams struct {
	Meta Meta `json:"_meta,omitzero"`
	// Mode is ElicitModeForm, ElicitModeURL, or empty for form.
	Mode string `json:"mode,omitzero"`
	// Message explains to the user what is asked and why.
	Message string `json:"message"`
	// RequestedSchema (form mode) is the raw flat object schema of the
	// requested fields; build or inspect it with ElicitationSchema.
	RequestedSchema jsontext.Value `json:"requestedSchema,omitzero"`
	// URL (URL mode) is the page the user should open.
	URL string `json:"url,omitzero"`
	// ElicitationID (URL mode, 2025-11-25 only) identifies the elicitation.
	ElicitationID string `json:"elicitationId,omitzero"`
	// Task asks for task-augmented execution (2025-11-25).
	Task *TaskMetadata `json:"task,omitzero"`
}

// EffectiveMode returns Mode, or ElicitModeForm when Mode is empty.
func (p *ElicitParams) EffectiveMode() string {
	if p.Mode == "" {
		return ElicitModeForm
	}
	return p.Mode
}

// Elicitation actions of ElicitResult.Action.
const (
	ElicitActionAccept  = "accept"
	ElicitActionDecline = "decline"
	ElicitActionCancel  = "cancel"
)

// ElicitResult is the client's answer to elicitation/create.
type ElicitResult struct {
	// Action is one of the ElicitAction constants.
	Action string `json:"action"`
	// Content holds the accepted form values: string, number, boolean or a
	// list of strings. Decoded numbers are float64 and lists are []any.
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitzero"`
}

// ElicitationCompleteParams are the params of notifications/elicitation/complete (2025-11-25 only).
type ElicitationCompleteParams struct {
	Meta          Meta   `json:"_meta,omitzero"`
	ElicitationID string `json:"elicitationId"`
}

// ElicitationSchema is the typed form of a form-mode requestedSchema: a flat
// object whose properties keep their order. It always encodes "type":"object".
type ElicitationSchema struct {
	// Schema is the optional $schema dialect URI.
	Schema     string
	Properties SchemaProperties
	Required   []string
}

type wireElicitationSchema struct {
	Schema     string           `json:"$schema,omitzero"`
	Type       string           `json:"type"`
	Properties SchemaProperties `json:"properties"`
	Required   []string         `json:"required,omitempty"`
}

// MarshalJSONTo writes the schema as a JSON Schema object.
func (s ElicitationSchema) MarshalJSONTo(enc *jsontext.Encoder) error {
	return json.MarshalEncode(enc, wireElicitationSchema{s.Schema, "object", s.Properties, s.Required})
}

// UnmarshalJSONFrom reads an object schema; unknown keywords are ignored.
func (s *ElicitationSchema) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w wireElicitationSchema
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	if w.Type != "object" {
		return fmt.Errorf("mcp: requestedSchema type %q, want \"object\"", w.Type)
	}
	*s = ElicitationSchema{w.Schema, w.Properties, w.Required}
	return nil
}

// ParseElicitationSchema decodes a raw requestedSchema.
func ParseElicitationSchema(raw jsontext.Value) (*ElicitationSchema, error) {
	s := new(ElicitationSchema)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Raw encodes the schema for ElicitParams.RequestedSchema.
func (s ElicitationSchema) Raw() (jsontext.Value, error) { return json.Marshal(s) }

// SchemaProperty is one named field of an ElicitationSchema.
type SchemaProperty struct {
	Name   string
	Schema PrimitiveSchema
}

// SchemaProperties is an ordered list of fields that encodes as a JSON object.
type SchemaProperties []SchemaProperty

// MarshalJSONTo writes the fields as a JSON object in order.
func (ps SchemaProperties) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, p := range ps {
		if err := enc.WriteToken(jsontext.String(p.Name)); err != nil {
			return err
		}
		if err := json.MarshalEncode(enc, &p.Schema); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// UnmarshalJSONFrom reads a JSON object of field schemas, keeping their order.
func (ps *SchemaProperties) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		*ps = nil
		return err
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("mcp: properties must be a JSON object, got %v", tok.Kind())
	}
	out := SchemaProperties{}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		p := SchemaProperty{Name: name.String()}
		if err := json.UnmarshalDecode(dec, &p.Schema); err != nil {
			return err
		}
		out = append(out, p)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*ps = out
	return nil
}

// PrimitiveSchema is the schema of one elicitation field. One struct covers
// every variant of the schemas: StringSchema, NumberSchema, BooleanSchema,
// the titled and untitled single- and multi-select enums (SEP-1330) and the
// legacy enum with enumNames. Default (SEP-1034) is a string, number, boolean
// or list of strings matching Type.
type PrimitiveSchema struct {
	// Type is "string", "number", "integer", "boolean" or "array" (multi-select).
	Type        string `json:"type"`
	Title       string `json:"title,omitzero"`
	Description string `json:"description,omitzero"`
	// String constraints; Format is "email", "uri", "date" or "date-time".
	MinLength *int64 `json:"minLength,omitzero"`
	MaxLength *int64 `json:"maxLength,omitzero"`
	Format    string `json:"format,omitzero"`
	// Pattern appears in some 2025 examples but in no schema; kept if present.
	Pattern string `json:"pattern,omitzero"`
	// Number constraints.
	Minimum *float64 `json:"minimum,omitzero"`
	Maximum *float64 `json:"maximum,omitzero"`
	// Enum lists the values of an untitled single-select enum.
	Enum []string `json:"enum,omitempty"`
	// EnumNames titles Enum in the deprecated legacy enum form.
	EnumNames []string `json:"enumNames,omitempty"`
	// OneOf lists the values of a titled single-select enum.
	OneOf []EnumOption `json:"oneOf,omitempty"`
	// MinItems, MaxItems and Items describe a multi-select enum (Type "array").
	MinItems *int64     `json:"minItems,omitzero"`
	MaxItems *int64     `json:"maxItems,omitzero"`
	Items    *EnumItems `json:"items,omitzero"`
	// Default is the pre-filled value (SEP-1034).
	Default any `json:"default,omitzero"`
}

// EnumOption is a value with a display title.
type EnumOption struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// EnumItems describes the items of a multi-select enum: Type "string" with
// Enum (untitled) or AnyOf (titled).
type EnumItems struct {
	Type  string       `json:"type,omitzero"`
	Enum  []string     `json:"enum,omitempty"`
	AnyOf []EnumOption `json:"anyOf,omitempty"`
}
