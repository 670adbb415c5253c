package mcp

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Reserved _meta keys.
const (
	// MetaKeyProgressToken (request) asks for notifications/progress.
	MetaKeyProgressToken = "progressToken"
	// MetaKeyProtocolVersion (2026 request, required) names the revision of the request.
	MetaKeyProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	// MetaKeyClientCapabilities (2026 request, required) holds ClientCapabilities.
	MetaKeyClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// MetaKeyClientInfo (2026 request) holds the client's Implementation.
	MetaKeyClientInfo = "io.modelcontextprotocol/clientInfo"
	// MetaKeyLogLevel (2026 request) asks for log notifications at this LoggingLevel.
	MetaKeyLogLevel = "io.modelcontextprotocol/logLevel"
	// MetaKeyServerInfo (2026 result) holds the server's Implementation.
	MetaKeyServerInfo = "io.modelcontextprotocol/serverInfo"
	// MetaKeySubscriptionID (2026) carries the id of the subscriptions/listen
	// request on its notifications and on its result.
	MetaKeySubscriptionID = "io.modelcontextprotocol/subscriptionId"
	// MetaKeyRelatedTask (2025 tasks) holds a RelatedTaskMetadata.
	MetaKeyRelatedTask = "io.modelcontextprotocol/related-task"
	// MetaKeyModelImmediateResponse (2025 tasks) holds a string for the model
	// on a CreateTaskResult.
	MetaKeyModelImmediateResponse = "io.modelcontextprotocol/model-immediate-response"
	// MetaKeyTraceParent is the W3C Trace Context traceparent value.
	MetaKeyTraceParent = "traceparent"
	// MetaKeyTraceState is the W3C Trace Context tracestate value.
	MetaKeyTraceState = "tracestate"
	// MetaKeyBaggage is the W3C Baggage value.
	MetaKeyBaggage = "baggage"
)

// Meta is the _meta object of params and results. Values decoded from JSON
// are stored as [jsontext.Value] so that they re-encode unchanged; values set
// by Go code may be any marshalable value. Read values with [Meta.Get] or the
// typed accessors rather than by type assertion.
type Meta map[string]any

// MarshalJSONTo writes the object: raw values as they are, others with
// the json package (as the reflective encoding of the map would; the
// order of members is unspecified either way). A nil Meta is {}.
func (m Meta) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for k, v := range m {
		if err := enc.WriteToken(jsontext.String(k)); err != nil {
			return err
		}
		var err error
		if raw, ok := v.(jsontext.Value); ok {
			err = enc.WriteValue(raw)
		} else {
			err = json.MarshalEncode(enc, v)
		}
		if err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// UnmarshalJSONFrom decodes a JSON object, keeping every value as raw JSON.
func (m *Meta) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		*m = nil
		return err
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("mcp: _meta must be a JSON object, got %v", tok.Kind())
	}
	out := make(Meta, 4)
	for dec.PeekKind() != '}' {
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		name, err := metaName(raw)
		if err != nil {
			return err
		}
		val, err := dec.ReadValue()
		if err != nil {
			return err
		}
		out[name] = val.Clone()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*m = out
	return nil
}

// metaKeys are the reserved keys, kept as strings so that decoding one
// allocates nothing for its name.
var metaKeys = []string{
	MetaKeyProgressToken, MetaKeyProtocolVersion, MetaKeyClientCapabilities, MetaKeyClientInfo,
	MetaKeyLogLevel, MetaKeyServerInfo, MetaKeySubscriptionID, MetaKeyRelatedTask,
	MetaKeyModelImmediateResponse, MetaKeyTraceParent, MetaKeyTraceState, MetaKeyBaggage,
}

// metaName decodes a quoted _meta member name, as read with
// jsontext.Decoder.ReadValue. The reserved keys come back without an
// allocation.
func metaName(quoted jsontext.Value) (string, error) {
	if name, ok := knownMetaKey(quoted); ok {
		return name, nil
	}
	u, err := jsontext.AppendUnquote(nil, quoted)
	return string(u), err
}

// knownMetaKey returns the reserved key a quoted member name (without
// escapes) spells.
func knownMetaKey(quoted []byte) (string, bool) {
	if len(quoted) < 2 {
		return "", false
	}
	b := quoted[1 : len(quoted)-1]
	for _, k := range metaKeys {
		if string(b) == k { // no allocation: a comparison
			return k, true
		}
	}
	return "", false
}

// Get decodes the value at key into v. It reports false if the key is absent.
func (m Meta) Get(key string, v any) (bool, error) {
	val, ok := m[key]
	if !ok {
		return false, nil
	}
	raw, ok := val.(jsontext.Value)
	if !ok {
		var err error
		if raw, err = json.Marshal(val); err != nil {
			return true, err
		}
	}
	return true, json.Unmarshal(raw, v)
}

// ProtocolVersion returns the 2026 per-request revision, or "" if absent or not a string.
func (m Meta) ProtocolVersion() string {
	var v string
	if _, err := m.Get(MetaKeyProtocolVersion, &v); err != nil {
		return ""
	}
	return v
}

// ClientCapabilities decodes the 2026 per-request client capabilities; it
// returns nil and no error if they are absent.
func (m Meta) ClientCapabilities() (*ClientCapabilities, error) {
	return metaObject[ClientCapabilities](m, MetaKeyClientCapabilities)
}

// ClientInfo decodes the 2026 per-request client identity; nil if absent.
func (m Meta) ClientInfo() (*Implementation, error) {
	return metaObject[Implementation](m, MetaKeyClientInfo)
}

// ServerInfo decodes the 2026 per-result server identity; nil if absent.
func (m Meta) ServerInfo() (*Implementation, error) {
	return metaObject[Implementation](m, MetaKeyServerInfo)
}

// LogLevel returns the 2026 per-request log level and whether it is present
// and a string. The level may still be invalid; check it with [LoggingLevel.Valid].
func (m Meta) LogLevel() (LoggingLevel, bool) {
	var l LoggingLevel
	ok, err := m.Get(MetaKeyLogLevel, &l)
	return l, ok && err == nil
}

// ProgressToken returns the progress token and whether a valid one is present.
func (m Meta) ProgressToken() (ID, bool) { return m.id(MetaKeyProgressToken) }

// SubscriptionID returns the subscriptions/listen id and whether a valid one is present.
func (m Meta) SubscriptionID() (ID, bool) { return m.id(MetaKeySubscriptionID) }

func (m Meta) id(key string) (ID, bool) {
	var id ID
	ok, err := m.Get(key, &id)
	return id, ok && err == nil && id.IsValid()
}

func metaObject[T any](m Meta, key string) (*T, error) {
	v := new(T)
	ok, err := m.Get(key, v)
	if !ok || err != nil {
		return nil, err
	}
	return v, nil
}

// ValidMetaKey reports whether key follows the _meta key syntax: an optional
// prefix of dot-separated labels followed by "/", then a name. Labels start
// with a letter, end with a letter or digit, and contain letters, digits and
// hyphens. A name starts and ends with a letter or digit and contains letters,
// digits, '-', '_' and '.'; it may be empty only after a prefix.
func ValidMetaKey(key string) bool {
	prefix, name, hasPrefix := strings.Cut(key, "/")
	if !hasPrefix {
		return key != "" && validMetaName(key)
	}
	for label := range strings.SplitSeq(prefix, ".") {
		if !validMetaLabel(label) {
			return false
		}
	}
	return validMetaName(name)
}

// IsReservedMetaKey reports whether key belongs to MCP: its prefix has
// "modelcontextprotocol" or "mcp" as second label, or it is one of the
// unprefixed reserved keys (progressToken, traceparent, tracestate, baggage).
func IsReservedMetaKey(key string) bool {
	switch key {
	case MetaKeyProgressToken, MetaKeyTraceParent, MetaKeyTraceState, MetaKeyBaggage:
		return true
	}
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	labels := strings.Split(prefix, ".")
	return len(labels) >= 2 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp")
}

func validMetaLabel(s string) bool {
	if s == "" || !isLetter(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if !isAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

func validMetaName(s string) bool {
	if s == "" {
		return true
	}
	if !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool  { return isLetter(c) || '0' <= c && c <= '9' }
