package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsontok"
	"github.com/mcpkit/mcpkit/mcp"
)

// Message is one decoded JSON-RPC 2.0 message. Exactly one shape holds:
//
//   - request: Method set, mcp.ID valid;
//   - notification: Method set, mcp.ID zero;
//   - response: Method empty, and either Result or Error set.
//
// Params, Result and Error.Data are kept as the raw JSON received, so each
// is decoded once, by whoever knows its type.
type Message struct {
	ID     mcp.ID
	Method string
	Params jsontext.Value
	Result jsontext.Value
	Error  *Error

	local error // set when this side ends a call itself (Conn.fail)
}

// IsRequest reports whether m is a request (it expects a response).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response (result or error).
func (m *Message) IsResponse() bool { return m.Method == "" }

// Limits bound what Decode accepts. The zero value applies the defaults.
type Limits struct {
	// MaxBytes is the largest message accepted, in bytes.
	// Default DefaultMaxMessageBytes.
	MaxBytes int
	// MaxDepth is the deepest nesting of arrays and objects accepted,
	// counting the message object itself as 1. Default DefaultMaxDepth.
	MaxDepth int
}

const (
	// DefaultMaxMessageBytes is the default cap on one message: 4 MiB.
	DefaultMaxMessageBytes = 4 << 20
	// DefaultMaxDepth is the default cap on JSON nesting depth.
	DefaultMaxDepth = 64
)

func (l Limits) maxBytes() int {
	if l.MaxBytes > 0 {
		return l.MaxBytes
	}
	return DefaultMaxMessageBytes
}

func (l Limits) maxDepth() int {
	if l.MaxDepth > 0 {
		return l.MaxDepth
	}
	return DefaultMaxDepth
}

// wireMessage is the envelope as it appears on the wire. Every member is
// raw so that presence, null and type can be told apart.
type wireMessage struct {
	JSONRPC jsontext.Value `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  jsontext.Value `json:"method"`
	Params  jsontext.Value `json:"params"`
	Result  jsontext.Value `json:"result"`
	Error   jsontext.Value `json:"error"`
}

// errNotObject: the message is JSON but not an object.
var errNotObject = errors.New("not a JSON object")

// parse reads the members of a message envelope, each kept raw, in one
// pass and without reflection: the strictness of decodeOpts (duplicate
// names, invalid UTF-8), names matched exactly after unescaping, unknown
// members ignored, nothing after the object. The raw members share one
// copy of data, so that the message does not hold on to the caller's
// buffer (none when owned). The everyday message is read by parseFast's
// walk over its bytes, every other by the token decoder (parseTokens),
// with the same result.
func (w *wireMessage) parse(data []byte, owned bool) error {
	if !owned {
		data = bytes.Clone(data) // the Message's raw members must not alias the caller's bytes
	}
	if w.parseFast(data) {
		return nil
	}
	return w.parseTokens(data)
}

// parseTokens is parse by the token decoder: every message parseFast
// does not take, and the error of one that is not valid.
func (w *wireMessage) parseTokens(data []byte) error {
	d := jsontok.New(data, decodeOpts)
	defer d.Release()
	tok, err := d.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return errNotObject
	}
	for d.PeekKind() != '}' {
		key, err := d.Name()
		if err != nil {
			return err
		}
		raw, err := d.Raw()
		if err != nil {
			return err
		}
		if slot := w.member(key); slot != nil {
			*slot = raw
		}
	}
	return d.End()
}

// member is where the envelope keeps the member named name, nil for a
// member it ignores.
func (w *wireMessage) member(name []byte) *jsontext.Value {
	switch string(name) {
	case "jsonrpc":
		return &w.JSONRPC
	case "id":
		return &w.ID
	case "method":
		return &w.Method
	case "params":
		return &w.Params
	case "result":
		return &w.Result
	case "error":
		return &w.Error
	}
	return nil
}

// decodeOpts: member names match case-sensitively and duplicates are
// rejected (both are the JSON v2 defaults, stated here so that a change of
// defaults cannot loosen them).
var decodeOpts = json.JoinOptions(
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
	json.MatchCaseInsensitiveNames(false),
)

// decodeMessage parses one JSON-RPC message strictly: valid UTF-8, no duplicate
// member names, case-sensitive member names, size and depth within lim,
// "jsonrpc":"2.0", a string or integer id (null is rejected on requests),
// and exactly one of the request, notification and response shapes.
//
// On failure the error is an *Error (get it with errors.As) ready to send
// back: mcp.CodeParseError for text that is not JSON (or breaks a limit),
// mcp.CodeInvalidRequest for JSON that is not a valid message. The returned
// Message is non-nil when the id could be read, so the error response can
// carry it.
func decodeMessage(data []byte, lim Limits) (*Message, error) {
	m, e := decode(data, lim)
	if e != nil {
		return m, e
	}
	return m, nil
}

// decodeOwnedMessage is decodeMessage for bytes the caller hands over:
// the Message's raw members (params, result, error data) are slices of
// data, not of a copy, so data must not change afterwards.
func decodeOwnedMessage(data []byte, lim Limits) (*Message, error) {
	m, e := decodeIn(data, lim, true)
	if e != nil {
		return m, e
	}
	return m, nil
}

// decode is decodeMessage with the concrete error type.
func decode(data []byte, lim Limits) (*Message, *Error) { return decodeIn(data, lim, false) }

// decodeIn decodes data, a copy of it unless owned.
func decodeIn(data []byte, lim Limits, owned bool) (*Message, *Error) {
	if len(data) > lim.maxBytes() {
		return nil, Errorf(mcp.CodeParseError, "Parse error: message of %d bytes exceeds the %d-byte limit", len(data), lim.maxBytes())
	}
	// Invalid UTF-8 is rejected by the parse itself (decodeOpts), as
	// -32700: no separate pass over the message.
	// Nesting cannot exceed the length: a limit at least that large
	// needs no pass (the transports' own outgoing limits are unbounded).
	// Nor can it exceed the number of opening brackets, which a vector
	// count finds (in strings too) long before depth's scan would.
	if len(data) > lim.maxDepth() && openings(data) > lim.maxDepth() && depth(data) > lim.maxDepth() {
		return nil, Errorf(mcp.CodeParseError, "Parse error: nesting depth exceeds the limit of %d", lim.maxDepth())
	}
	first := firstByte(data)
	if first == '[' {
		if !jsontext.Value(data).IsValid() {
			return nil, NewError(mcp.CodeParseError, "Parse error: invalid JSON")
		}
		return nil, NewError(mcp.CodeInvalidRequest, "Invalid Request: batches are not supported")
	}
	var w wireMessage
	if err := w.parse(data, owned); err != nil {
		if first != '{' && jsontext.Value(data).IsValid() {
			return nil, NewError(mcp.CodeInvalidRequest, "Invalid Request: message must be a JSON object")
		}
		return nil, Errorf(mcp.CodeParseError, "Parse error: %s", shortErr(err))
	}
	m := &Message{}
	// Read the id first so that every later error can carry it.
	idOK := true
	if w.ID != nil && w.ID.Kind() != 'n' {
		id, err := mcp.ParseID(w.ID)
		if err != nil {
			idOK = false
		} else {
			m.ID = id
		}
	}
	bad := func(format string, args ...any) (*Message, *Error) {
		if m.ID.IsValid() {
			return m, Errorf(mcp.CodeInvalidRequest, "Invalid Request: "+format, args...)
		}
		return nil, Errorf(mcp.CodeInvalidRequest, "Invalid Request: "+format, args...)
	}
	if string(w.JSONRPC) != `"2.0"` {
		return bad(`"jsonrpc" must be "2.0"`)
	}
	if !idOK {
		return bad(`"id" must be a string or an integer`)
	}
	if w.Method != nil {
		if w.Method.Kind() != '"' {
			return bad(`"method" must be a string`)
		}
		if err := unquote(w.Method, &m.Method); err != nil || m.Method == "" {
			return bad(`"method" must be a non-empty string`)
		}
		if w.ID != nil && w.ID.Kind() == 'n' {
			return bad(`request "id" must not be null`)
		}
		if w.Result != nil || w.Error != nil {
			return bad(`a request must not carry "result" or "error"`)
		}
		if w.Params != nil {
			if k := w.Params.Kind(); k != '{' && k != '[' {
				return bad(`"params" must be an object or an array`)
			}
			m.Params = w.Params
		}
		return m, nil
	}
	// A response.
	if w.Params != nil {
		return bad(`a response must not carry "params"`)
	}
	switch {
	case w.Result != nil && w.Error != nil:
		return bad(`a response carries "result" or "error", not both`)
	case w.Result != nil:
		if !m.ID.IsValid() {
			return bad(`a result response needs an "id"`)
		}
		m.Result = w.Result
	case w.Error != nil:
		// The id may be absent or null when the request's id could not
		// be read (MCP leaves it out; bare JSON-RPC writes null).
		// Pointers tell a missing (or null) code or message from a zero one:
		// both members are required.
		var we struct {
			Code    *int64         `json:"code"`
			Message *string        `json:"message"`
			Data    jsontext.Value `json:"data"`
		}
		if w.Error.Kind() != '{' || json.Unmarshal(w.Error, &we, decodeOpts) != nil || we.Code == nil || we.Message == nil {
			return bad(`"error" must be an object with an integer "code" and a string "message"`)
		}
		m.Error = &Error{Code: *we.Code, Message: *we.Message, Data: we.Data}
	default:
		return bad(`a message needs "method", "result" or "error"`)
	}
	return m, nil
}

// unquote decodes a JSON string the parse has checked. A string without
// escapes is its bytes; a method MCP names is its constant (no copy).
func unquote(raw jsontext.Value, dst *string) error {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
		b := raw[1 : len(raw)-1]
		if name, ok := knownMethods[string(b)]; ok {
			*dst = name
		} else {
			*dst = string(b)
		}
		return nil
	}
	return json.Unmarshal(raw, dst)
}

// knownMethods holds the method names of MCP, each as its own string.
var knownMethods = func() map[string]string {
	m := map[string]string{}
	for _, name := range mcp.MethodNames() {
		m[name] = name
	}
	return m
}()

// openings counts the bytes that open an object or an array, wherever
// they are: a bound on the nesting depth.
func openings(data []byte) int {
	return bytes.Count(data, openBrace) + bytes.Count(data, openBracket)
}

var openBrace, openBracket = []byte("{"), []byte("[")

func firstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c
	}
	return 0
}

// depth returns the deepest nesting of arrays and objects in data, which
// need not be valid JSON: it is a cheap guard run before the real parse.
// String bodies, most of a message, are skipped with bytes.IndexByte.
func depth(data []byte) int {
	d, maxD := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			// Find the closing quote: one not escaped by an odd run of
			// backslashes.
			for {
				k := bytes.IndexByte(data[i+1:], '"')
				if k < 0 {
					return maxD
				}
				i += k + 1
				n := 0
				for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		case '{', '[':
			d++
			if d > maxD {
				maxD = d
			}
		case '}', ']':
			d--
		}
	}
	return maxD
}

func shortErr(err error) string {
	s := err.Error()
	const max = 200
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// String renders a short description of m for logs.
func (m *Message) String() string {
	switch {
	case m.IsRequest():
		return fmt.Sprintf("request %s id=%s", m.Method, m.ID)
	case m.IsNotification():
		return "notification " + m.Method
	case m.Error != nil:
		return fmt.Sprintf("error response id=%s code=%d", m.ID, m.Error.Code)
	default:
		return fmt.Sprintf("response id=%s", m.ID)
	}
}
