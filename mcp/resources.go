package mcp

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Resource describes a piece of data a server offers, identified by URI.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitzero"`
	Description string       `json:"description,omitzero"`
	MIMEType    string       `json:"mimeType,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	// Size is the raw content size in bytes, if known.
	Size  *int64 `json:"size,omitzero"`
	Icons []Icon `json:"icons,omitempty"`
	Meta  Meta   `json:"_meta,omitzero"`
}

// ResourceTemplate describes a family of resources by RFC 6570 URI template.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitzero"`
	Description string       `json:"description,omitzero"`
	MIMEType    string       `json:"mimeType,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitzero"`
}

// ResourceContents is the contents of one resource: *TextResourceContents or
// *BlobResourceContents. Decoding picks the type by the presence of "text"
// or "blob", so an empty text and an empty blob stay distinct.
type ResourceContents interface {
	// ResourceURI returns the URI of the resource.
	ResourceURI() string
	isResourceContents()
}

// TextResourceContents is resource contents that are text.
type TextResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitzero"`
	Text     string `json:"text"`
	Meta     Meta   `json:"_meta,omitzero"`
}

// BlobResourceContents is binary resource contents; Blob travels base64-encoded.
type BlobResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitzero"`
	Blob     []byte `json:"blob"`
	Meta     Meta   `json:"_meta,omitzero"`
}

// ResourceURI returns c.URI.
func (c *TextResourceContents) ResourceURI() string { return c.URI }

// ResourceURI returns c.URI.
func (c *BlobResourceContents) ResourceURI() string { return c.URI }

func (*TextResourceContents) isResourceContents() {}
func (*BlobResourceContents) isResourceContents() {}

// DecodeResourceContents decodes text or blob resource contents.
func DecodeResourceContents(raw jsontext.Value) (ResourceContents, error) {
	return decodeResourceContents(raw)
}

func decodeResourceContents(raw jsontext.Value) (ResourceContents, error) {
	var w struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     *[]byte `json:"blob"`
		Meta     Meta    `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	switch {
	case w.Text != nil && w.Blob != nil:
		return nil, errors.New(`mcp: resource contents with both "text" and "blob"`)
	case w.Text != nil:
		return &TextResourceContents{URI: w.URI, MIMEType: w.MIMEType, Text: *w.Text, Meta: w.Meta}, nil
	case w.Blob != nil:
		return &BlobResourceContents{URI: w.URI, MIMEType: w.MIMEType, Blob: *w.Blob, Meta: w.Meta}, nil
	}
	return nil, errors.New(`mcp: resource contents without "text" or "blob"`)
}

// ResourceContentsList is a list of resource contents. It marshals as a JSON
// array (an empty one when nil) and decodes each element as text or blob.
type ResourceContentsList []ResourceContents

// MarshalJSONTo writes the contents as a JSON array.
func (l ResourceContentsList) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginArray); err != nil {
		return err
	}
	for _, c := range l {
		if c == nil {
			return errors.New("mcp: nil resource contents")
		}
		if err := json.MarshalEncode(enc, c); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndArray)
}

// UnmarshalJSONFrom reads a JSON array of resource contents; null yields nil.
func (l *ResourceContentsList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var raws []jsontext.Value
	if err := json.UnmarshalDecode(dec, &raws); err != nil {
		return err
	}
	if raws == nil {
		*l = nil
		return nil
	}
	out := make(ResourceContentsList, len(raws))
	for i, raw := range raws {
		c, err := decodeResourceContents(raw)
		if err != nil {
			return fmt.Errorf("mcp: contents[%d]: %w", i, err)
		}
		out[i] = c
	}
	*l = out
	return nil
}

// ListResourcesParams are the params of resources/list.
type ListResourcesParams struct {
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the opaque position to continue from; nil asks for the first page.
	Cursor *string `json:"cursor,omitzero"`
}

// ListResourcesResult is the result of resources/list.
type ListResourcesResult struct {
	ResultType ResultType `json:"resultType,omitzero"`
	Resources  []Resource `json:"resources"`
	// NextCursor is nil on the last page.
	NextCursor *string    `json:"nextCursor,omitzero"`
	TTLMs      *int64     `json:"ttlMs,omitzero"`
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	Meta       Meta       `json:"_meta,omitzero"`
}

// ListResourceTemplatesParams are the params of resources/templates/list.
type ListResourceTemplatesParams struct {
	Meta Meta `json:"_meta,omitzero"`
	// Cursor is the opaque position to continue from; nil asks for the first page.
	Cursor *string `json:"cursor,omitzero"`
}

// ListResourceTemplatesResult is the result of resources/templates/list.
type ListResourceTemplatesResult struct {
	ResultType        ResultType         `json:"resultType,omitzero"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	// NextCursor is nil on the last page.
	NextCursor *string    `json:"nextCursor,omitzero"`
	TTLMs      *int64     `json:"ttlMs,omitzero"`
	CacheScope CacheScope `json:"cacheScope,omitzero"`
	Meta       Meta       `json:"_meta,omitzero"`
}

// ReadResourceParams are the params of resources/read. The MRTR fields are
// set only on a 2026 retry after an InputRequiredResult.
type ReadResourceParams struct {
	Meta           Meta           `json:"_meta,omitzero"`
	URI            string         `json:"uri"`
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	RequestState   string         `json:"requestState,omitzero"`
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	ResultType ResultType           `json:"resultType,omitzero"`
	Contents   ResourceContentsList `json:"contents"`
	TTLMs      *int64               `json:"ttlMs,omitzero"`
	CacheScope CacheScope           `json:"cacheScope,omitzero"`
	Meta       Meta                 `json:"_meta,omitzero"`
}

// SubscribeParams are the params of resources/subscribe (2025 only).
type SubscribeParams struct {
	Meta Meta   `json:"_meta,omitzero"`
	URI  string `json:"uri"`
}

// UnsubscribeParams are the params of resources/unsubscribe (2025 only).
type UnsubscribeParams struct {
	Meta Meta   `json:"_meta,omitzero"`
	URI  string `json:"uri"`
}

// ResourceUpdatedNotificationParams are the params of notifications/resources/updated.
type ResourceUpdatedNotificationParams struct {
	Meta Meta   `json:"_meta,omitzero"`
	URI  string `json:"uri"`
}
