package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Role is the sender or recipient of a message or piece of content.
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations are optional hints on content and resources.
type Annotations struct {
	// Audience lists who the content is meant for.
	Audience []Role `json:"audience,omitempty"`
	// Priority ranges from 0 (optional) to 1 (required).
	Priority *float64 `json:"priority,omitzero"`
	// LastModified is an ISO 8601 timestamp (2025-06-18+).
	LastModified string `json:"lastModified,omitzero"`
}

// Content type discriminators.
const (
	ContentTypeText         = "text"
	ContentTypeImage        = "image"
	ContentTypeAudio        = "audio"
	ContentTypeResourceLink = "resource_link"
	ContentTypeResource     = "resource"
	ContentTypeToolUse      = "tool_use"
	ContentTypeToolResult   = "tool_result"
)

// Content is one content block. Its implementations are the pointer types
// *TextContent, *ImageContent, *AudioContent, *ResourceLink,
// *EmbeddedResource, *ToolUseContent and *ToolResultContent. Each writes its
// "type" discriminator when marshaled. Tool results and prompts use the first
// five; sampling messages use text, image, audio, tool_use and tool_result.
type Content interface {
	// ContentType returns the "type" discriminator, e.g. "text".
	ContentType() string
	isContent()
}

// TextContent is a text block.
type TextContent struct {
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitzero"`
}

// ImageContent is an image block; Data travels base64-encoded.
type ImageContent struct {
	Data        []byte       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitzero"`
}

// AudioContent is an audio block (2025-03-26+); Data travels base64-encoded.
type AudioContent struct {
	Data        []byte       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitzero"`
}

// ResourceLink is a reference to a resource the client may read (2025-06-18+).
type ResourceLink struct {
	Resource
}

// EmbeddedResource is a block carrying the contents of a resource.
type EmbeddedResource struct {
	Resource    ResourceContents `json:"resource"`
	Annotations *Annotations     `json:"annotations,omitzero"`
	Meta        Meta             `json:"_meta,omitzero"`
}

// ToolUseContent is a model's request to call a tool, in sampling (2025-11-25+).
type ToolUseContent struct {
	// ID identifies this tool use; the matching result names it in ToolUseID.
	ID string `json:"id"`
	// Name is the tool name.
	Name string `json:"name"`
	// Input holds the tool arguments as a raw JSON object.
	Input jsontext.Value `json:"input"`
	Meta  Meta           `json:"_meta,omitzero"`
}

// ToolResultContent is the result of a tool use, in sampling (2025-11-25+).
type ToolResultContent struct {
	// ToolUseID names the ToolUseContent this answers.
	ToolUseID string `json:"toolUseId"`
	// Content holds the unstructured result.
	Content Contents `json:"content"`
	// StructuredContent holds an optional structured result as raw JSON.
	StructuredContent jsontext.Value `json:"structuredContent,omitzero"`
	// IsError reports whether the tool use failed.
	IsError bool `json:"isError,omitzero"`
	Meta    Meta `json:"_meta,omitzero"`
}

// ContentType returns ContentTypeText.
func (*TextContent) ContentType() string { return ContentTypeText }

// ContentType returns ContentTypeImage.
func (*ImageContent) ContentType() string { return ContentTypeImage }

// ContentType returns ContentTypeAudio.
func (*AudioContent) ContentType() string { return ContentTypeAudio }

// ContentType returns ContentTypeResourceLink.
func (*ResourceLink) ContentType() string { return ContentTypeResourceLink }

// ContentType returns ContentTypeResource.
func (*EmbeddedResource) ContentType() string { return ContentTypeResource }

// ContentType returns ContentTypeToolUse.
func (*ToolUseContent) ContentType() string { return ContentTypeToolUse }

// ContentType returns ContentTypeToolResult.
func (*ToolResultContent) ContentType() string { return ContentTypeToolResult }

func (*TextContent) isContent()       {}
func (*ImageContent) isContent()      {}
func (*AudioContent) isContent()      {}
func (*ResourceLink) isContent()      {}
func (*EmbeddedResource) isContent()  {}
func (*ToolUseContent) isContent()    {}
func (*ToolResultContent) isContent() {}

// The wire* types drop the JSON methods so that typed can embed their fields
// next to the "type" discriminator.
type (
	wireText       TextContent
	wireImage      ImageContent
	wireAudio      AudioContent
	wireLink       ResourceLink
	wireToolUse    ToolUseContent
	wireToolResult ToolResultContent
)

// typed is the wire shape of a content block: its discriminator plus its fields.
type typed[T any] struct {
	Type   string `json:"type"`
	Fields *T     `json:",embed"`
}

func marshalTyped[T any](enc *jsontext.Encoder, typ string, v *T) error {
	return json.MarshalEncode(enc, typed[T]{typ, v})
}

func unmarshalTyped[T any](dec *jsontext.Decoder, typ string, v *T) error {
	w := typed[T]{Fields: v}
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	if w.Type != typ {
		return fmt.Errorf("mcp: content type %q, want %q", w.Type, typ)
	}
	return nil
}

// MarshalJSONTo writes the block with "type":"text". A block with no
// annotations and no _meta, the common case, is written token by token.
func (c TextContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	if c.Annotations != nil || c.Meta != nil {
		return marshalTyped(enc, ContentTypeText, (*wireText)(&c))
	}
	for _, tok := range [...]jsontext.Token{jsontext.BeginObject, jsontext.String("type"), jsontext.String(ContentTypeText), jsontext.String("text"), jsontext.String(c.Text), jsontext.EndObject} {
		if err := enc.WriteToken(tok); err != nil {
			return err
		}
	}
	return nil
}

// UnmarshalJSONFrom reads a block and checks "type":"text".
func (c *TextContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return unmarshalTyped(dec, ContentTypeText, (*wireText)(c))
}

// MarshalJSONTo writes the block with "type":"image".
func (c ImageContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return marshalTyped(enc, ContentTypeImage, (*wireImage)(&c))
}

// UnmarshalJSONFrom reads a block and checks "type":"image".
func (c *ImageContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return unmarshalTyped(dec, ContentTypeImage, (*wireImage)(c))
}

// MarshalJSONTo writes the block with "type":"audio".
func (c AudioContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return marshalTyped(enc, ContentTypeAudio, (*wireAudio)(&c))
}

// UnmarshalJSONFrom reads a block and checks "type":"audio".
func (c *AudioContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return unmarshalTyped(dec, ContentTypeAudio, (*wireAudio)(c))
}

// MarshalJSONTo writes the block with "type":"resource_link".
func (c ResourceLink) MarshalJSONTo(enc *jsontext.Encoder) error {
	return marshalTyped(enc, ContentTypeResourceLink, (*wireLink)(&c))
}

// UnmarshalJSONFrom reads a block and checks "type":"resource_link".
func (c *ResourceLink) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return unmarshalTyped(dec, ContentTypeResourceLink, (*wireLink)(c))
}

// MarshalJSONTo writes the block with "type":"tool_use".
func (c ToolUseContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return marshalTyped(enc, ContentTypeToolUse, (*wireToolUse)(&c))
}

// UnmarshalJSONFrom reads a block and checks "type":"tool_use".
func (c *ToolUseContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return unmarshalTyped(dec, ContentTypeToolUse, (*wireToolUse)(c))
}

// MarshalJSONTo writes the block with "type":"tool_result".
func (c ToolResultContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	return marshalTyped(enc, ContentTypeToolResult, (*wireToolResult)(&c))
}

// UnmarshalJSONFrom reads a block and checks "type":"tool_result".
func (c *ToolResultContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return unmarshalTyped(dec, ContentTypeToolResult, (*wireToolResult)(c))
}

// wireEmbedded is the wire shape of EmbeddedResource; R is ResourceContents
// when encoding and jsontext.Value when decoding.
type wireEmbedded[R any] struct {
	Type        string       `json:"type"`
	Resource    R            `json:"resource"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitzero"`
}

// MarshalJSONTo writes the block with "type":"resource".
func (c EmbeddedResource) MarshalJSONTo(enc *jsontext.Encoder) error {
	if c.Resource == nil {
		return errors.New("mcp: EmbeddedResource without Resource")
	}
	return json.MarshalEncode(enc, wireEmbedded[ResourceContents]{ContentTypeResource, c.Resource, c.Annotations, c.Meta})
}

// UnmarshalJSONFrom reads a block, checks "type":"resource" and decodes the
// text or blob contents.
func (c *EmbeddedResource) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w wireEmbedded[jsontext.Value]
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	if w.Type != ContentTypeResource {
		return fmt.Errorf("mcp: content type %q, want %q", w.Type, ContentTypeResource)
	}
	rc, err := decodeResourceContents(w.Resource)
	if err != nil {
		return err
	}
	*c = EmbeddedResource{Resource: rc, Annotations: w.Annotations, Meta: w.Meta}
	return nil
}

// newContent returns an empty block for a "type" discriminator.
func newContent(typ string) (Content, error) {
	switch typ {
	case ContentTypeText:
		return new(TextContent), nil
	case ContentTypeImage:
		return new(ImageContent), nil
	case ContentTypeAudio:
		return new(AudioContent), nil
	case ContentTypeResourceLink:
		return new(ResourceLink), nil
	case ContentTypeResource:
		return new(EmbeddedResource), nil
	case ContentTypeToolUse:
		return new(ToolUseContent), nil
	case ContentTypeToolResult:
		return new(ToolResultContent), nil
	}
	return nil, fmt.Errorf("mcp: unknown content type %q", typ)
}

// plainText decodes the everyday text block, {"type":"text","text":"…"}
// byte for byte, whose text has no control character or invalid UTF-8
// and no escape other than the two-character ones (\" \\ \/ \b \f \n \r
// \t: JSON text inside a text block, as a tool's result usually holds,
// escapes its quotes): what the full decoder would make of it, without
// it. Anything else (a \u escape among them) reports false.
func plainText(raw jsontext.Value) (*TextContent, bool) {
	const open, end = `{"type":"text","text":"`, `"}`
	if len(raw) < len(open)+len(end) || string(raw[:len(open)]) != open || string(raw[len(raw)-len(end):]) != end {
		return nil, false
	}
	text := raw[len(open) : len(raw)-len(end)]
	escapes := 0
	for i := 0; i < len(text); i++ {
		switch b := text[i]; {
		case b == '\\':
			if i+1 == len(text) || unescapeByte(text[i+1]) == 0 {
				return nil, false // a \u escape, an invalid one, or the closing quote escaped
			}
			escapes++
			i++
		case b < 0x20 || b == '"':
			return nil, false
		}
	}
	if !utf8.Valid(text) {
		return nil, false
	}
	if escapes == 0 {
		return &TextContent{Text: string(text)}, true
	}
	var sb strings.Builder
	sb.Grow(len(text) - escapes)
	for i := 0; i < len(text); i++ {
		if b := text[i]; b != '\\' {
			sb.WriteByte(b)
			continue
		}
		i++
		sb.WriteByte(unescapeByte(text[i]))
	}
	return &TextContent{Text: sb.String()}, true
}

// unescapeByte returns the byte a two-character JSON escape \c stands
// for, or 0 when \c is not one (\u, or not an escape at all).
func unescapeByte(c byte) byte {
	switch c {
	case '"', '\\', '/':
		return c
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return 0
}

// leadingContent returns a new block of the type raw names in its first
// member when it is written {"type":"text" (or another known type)
// without whitespace or escapes, as encoders usually write it; nil
// otherwise. The block's own decoder then reads the whole of raw and
// checks its type again, so the probe is spared without accepting more.
func leadingContent(raw jsontext.Value) Content {
	const open = `{"type":"`
	if len(raw) <= len(open) || string(raw[:len(open)]) != open {
		return nil
	}
	rest := raw[len(open):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || end+1 >= len(rest) || (rest[end+1] != ',' && rest[end+1] != '}') {
		return nil
	}
	switch string(rest[:end]) { // no backslash can be in a known type's name
	case ContentTypeText:
		return new(TextContent)
	case ContentTypeImage:
		return new(ImageContent)
	case ContentTypeAudio:
		return new(AudioContent)
	case ContentTypeResourceLink:
		return new(ResourceLink)
	case ContentTypeResource:
		return new(EmbeddedResource)
	case ContentTypeToolUse:
		return new(ToolUseContent)
	case ContentTypeToolResult:
		return new(ToolResultContent)
	}
	return nil
}

// DecodeContent decodes one content block, choosing its Go type by "type".
func DecodeContent(raw jsontext.Value) (Content, error) {
	if t, ok := plainText(raw); ok {
		return t, nil
	}
	c := leadingContent(raw)
	if c == nil {
		var probe struct {
			Type *string `json:"type"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, err
		}
		if probe.Type == nil {
			return nil, errors.New(`mcp: content block without "type"`)
		}
		var err error
		if c, err = newContent(*probe.Type); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	return c, nil
}

func marshalContent(enc *jsontext.Encoder, c Content) error {
	switch b := c.(type) {
	case nil:
		return errors.New("mcp: nil content block")
	case *TextContent:
		if b == nil {
			return errors.New("mcp: nil content block")
		}
		return b.MarshalJSONTo(enc)
	}
	return json.MarshalEncode(enc, c)
}

// Contents is a list of content blocks. It marshals as a JSON array (an
// empty one when nil) and unmarshals each element by its "type"; an unknown
// type is an error naming it.
type Contents []Content

// MarshalJSONTo writes the blocks as a JSON array.
func (cs Contents) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for _, c := range cs {
		if err := marshalContent(enc, c); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndArray)
}

// UnmarshalJSONFrom reads a JSON array of blocks; null yields nil.
func (cs *Contents) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		*cs = nil
		return err
	}
	if dec.PeekKind() != '[' {
		return fmt.Errorf("mcp: content must be a JSON array, got %v", dec.PeekKind())
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	out := Contents{}
	for dec.PeekKind() != ']' {
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		c, err := DecodeContent(raw)
		if err != nil {
			return err
		}
		out = append(out, c)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*cs = out
	return nil
}

// SamplingContent is the content of a sampling message: one block or an
// array of blocks (2025-11-25+). IsArray remembers the JSON shape, so a decoded
// value re-encodes the same way. A value with exactly one block and IsArray
// false encodes as a bare block, the only form older revisions accept.
type SamplingContent struct {
	Blocks  Contents
	IsArray bool
}

// NewSamplingContent returns content holding blocks; it is an array unless
// there is exactly one block.
func NewSamplingContent(blocks ...Content) SamplingContent {
	return SamplingContent{Blocks: blocks, IsArray: len(blocks) != 1}
}

// MarshalJSONTo writes a single block or an array of blocks.
func (s SamplingContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	if !s.IsArray && len(s.Blocks) == 1 {
		return marshalContent(enc, s.Blocks[0])
	}
	return s.Blocks.MarshalJSONTo(enc)
}

// UnmarshalJSONFrom reads a single block or an array of blocks.
func (s *SamplingContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '[' {
		s.IsArray = true
		return s.Blocks.UnmarshalJSONFrom(dec)
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	c, err := DecodeContent(raw)
	if err != nil {
		return err
	}
	*s = SamplingContent{Blocks: Contents{c}}
	return nil
}
