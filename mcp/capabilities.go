package mcp

import (
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// ClientCapabilities are the optional features a client supports. In 2025
// they are sent once in initialize; in 2026 with every request under
// MetaKeyClientCapabilities. A nil field means the capability is absent.
type ClientCapabilities struct {
	// Experimental holds non-standard capabilities by name.
	Experimental map[string]jsontext.Value `json:"experimental,omitempty"`
	// Roots means the client answers roots/list (deprecated in 2026).
	Roots *RootsCapability `json:"roots,omitzero"`
	// Sampling means the client answers sampling/createMessage (deprecated in 2026).
	Sampling *SamplingCapability `json:"sampling,omitzero"`
	// Elicitation means the client answers elicitation/create (2025-06-18+).
	Elicitation *ElicitationCapability `json:"elicitation,omitzero"`
	// Tasks describes task-augmented request support (2025-11-25 only).
	Tasks *TasksCapability `json:"tasks,omitzero"`
	// Extensions holds negotiated extensions by id, e.g.
	// "io.modelcontextprotocol/tasks" (2026-07-28).
	Extensions map[string]jsontext.Value `json:"extensions,omitempty"`
}

// RootsCapability describes the client's roots support.
type RootsCapability struct {
	// ListChanged means the client sends notifications/roots/list_changed (2025 only).
	ListChanged bool `json:"listChanged,omitzero"`
}

// SamplingCapability describes the client's sampling support.
type SamplingCapability struct {
	// Context means the client honors includeContext other than "none".
	Context *struct{} `json:"context,omitzero"`
	// Tools means the client accepts tools and toolChoice (2025-11-25+).
	Tools *struct{} `json:"tools,omitzero"`
}

// ElicitationCapability describes the client's elicitation modes. An empty
// object (both fields nil) means form mode only, for backward compatibility.
type ElicitationCapability struct {
	// Form means the client supports form-mode elicitation.
	Form *FormElicitationCapability `json:"form,omitzero"`
	// URL means the client supports URL-mode elicitation (2025-11-25+).
	URL *struct{} `json:"url,omitzero"`
}

// FormElicitationCapability describes form-mode elicitation support.
type FormElicitationCapability struct {
	// ApplyDefaults is an SDK convention, not in the schemas: the client fills
	// schema defaults into omitted fields of accepted responses (SEP-1034).
	ApplyDefaults bool `json:"applyDefaults,omitzero"`
}

// SupportsForm reports whether form mode is declared, explicitly or by an
// empty elicitation object. It is false for a nil receiver.
func (c *ElicitationCapability) SupportsForm() bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// SupportsURL reports whether URL mode is declared. It is false for a nil receiver.
func (c *ElicitationCapability) SupportsURL() bool { return c != nil && c.URL != nil }

// TasksCapability is the 2025-11-25 tasks capability of either side.
type TasksCapability struct {
	// List means the receiver supports tasks/list.
	List *struct{} `json:"list,omitzero"`
	// Cancel means the receiver supports tasks/cancel.
	Cancel *struct{} `json:"cancel,omitzero"`
	// Requests lists task-augmentable requests as a two-level map, e.g.
	// {"tools": {"call": {}}} or {"sampling": {"createMessage": {}}}.
	Requests map[string]map[string]struct{} `json:"requests,omitempty"`
}

// SupportsRequest reports whether method (such as "tools/call") may be
// task-augmented. It is false for a nil receiver.
func (c *TasksCapability) SupportsRequest(method string) bool {
	if c == nil {
		return false
	}
	group, name, ok := strings.Cut(method, "/")
	if !ok {
		return false
	}
	_, ok = c.Requests[group][name]
	return ok
}

// ServerCapabilities are the optional features a server supports, sent in
// InitializeResult (2025) or DiscoverResult (2026).
type ServerCapabilities struct {
	// Experimental holds non-standard capabilities by name.
	Experimental map[string]jsontext.Value `json:"experimental,omitempty"`
	// Logging means the server can send log notifications (deprecated in 2026).
	Logging *struct{} `json:"logging,omitzero"`
	// Completions means the server answers completion/complete (2025-03-26+).
	Completions *struct{} `json:"completions,omitzero"`
	// Prompts means the server offers prompts.
	Prompts *PromptsCapability `json:"prompts,omitzero"`
	// Resources means the server offers resources.
	Resources *ResourcesCapability `json:"resources,omitzero"`
	// Tools means the server offers tools.
	Tools *ToolsCapability `json:"tools,omitzero"`
	// Tasks describes task-augmented request support (2025-11-25 only).
	Tasks *TasksCapability `json:"tasks,omitzero"`
	// Extensions holds supported extensions by id (2026-07-28).
	Extensions map[string]jsontext.Value `json:"extensions,omitempty"`
}

// PromptsCapability describes the server's prompt support.
type PromptsCapability struct {
	// ListChanged means the server emits notifications/prompts/list_changed.
	ListChanged bool `json:"listChanged,omitzero"`
}

// ResourcesCapability describes the server's resource support.
type ResourcesCapability struct {
	// Subscribe means the server supports per-resource update notifications.
	Subscribe bool `json:"subscribe,omitzero"`
	// ListChanged means the server emits notifications/resources/list_changed.
	ListChanged bool `json:"listChanged,omitzero"`
}

// ToolsCapability describes the server's tool support.
type ToolsCapability struct {
	// ListChanged means the server emits notifications/tools/list_changed.
	ListChanged bool `json:"listChanged,omitzero"`
}

// Clone returns a deep copy of c: its maps, the capabilities it points
// to and their raw values are new, so the copy can be changed without
// touching c.
func (c ClientCapabilities) Clone() ClientCapabilities {
	c.Experimental = cloneRawMap(c.Experimental)
	c.Extensions = cloneRawMap(c.Extensions)
	c.Roots = clonePtr(c.Roots)
	if c.Sampling != nil {
		s := *c.Sampling
		s.Context, s.Tools = clonePtr(s.Context), clonePtr(s.Tools)
		c.Sampling = &s
	}
	if c.Elicitation != nil {
		e := *c.Elicitation
		e.Form, e.URL = clonePtr(e.Form), clonePtr(e.URL)
		c.Elicitation = &e
	}
	c.Tasks = c.Tasks.clone()
	return c
}

// Clone returns a deep copy of c, as ClientCapabilities.Clone does.
func (c ServerCapabilities) Clone() ServerCapabilities {
	c.Experimental = cloneRawMap(c.Experimental)
	c.Extensions = cloneRawMap(c.Extensions)
	c.Logging, c.Completions = clonePtr(c.Logging), clonePtr(c.Completions)
	c.Prompts, c.Resources, c.Tools = clonePtr(c.Prompts), clonePtr(c.Resources), clonePtr(c.Tools)
	c.Tasks = c.Tasks.clone()
	return c
}

func (c *TasksCapability) clone() *TasksCapability {
	if c == nil {
		return nil
	}
	t := *c
	t.List, t.Cancel = clonePtr(t.List), clonePtr(t.Cancel)
	if t.Requests != nil {
		t.Requests = make(map[string]map[string]struct{}, len(c.Requests))
		for k, v := range c.Requests {
			m := make(map[string]struct{}, len(v))
			for n := range v {
				m[n] = struct{}{}
			}
			t.Requests[k] = m
		}
	}
	return &t
}

// clonePtr returns a pointer to a copy of *p (nil for nil).
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneRawMap(m map[string]jsontext.Value) map[string]jsontext.Value {
	if m == nil {
		return nil
	}
	out := make(map[string]jsontext.Value, len(m))
	for k, v := range m {
		out[k] = v.Clone()
	}
	return out
}
