// Package rpccodec is the single-message JSON-RPC 2.0 codec that package
// jsonrpc (its Conn) and internal/wire (the HTTP transports, the auth
// middleware, the client) share: strict decoding of one message into an
// Envelope and encoding of requests, results and errors into pooled
// buffers. It works on its own types (Envelope, Error), which jsonrpc and
// internal/wire turn into jsonrpc.Message and jsonrpc.Error; jsonrpc.Error
// has Error's fields, so the two convert into each other without a copy.
//
// It imports mcp (the ID type, error codes, method names, and
// mcp.CallToolResult, which it appends without the encoder:
// encode_tool.go), internal/jsontok and internal/jsonwalk; nothing else
// of mcpkit, and never jsonrpc.
package rpccodec

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsontok"
	"github.com/mcpkit/mcpkit/mcp"
)

// Envelope is one decoded message in the codec's terms; jsonrpc.Message
// documents its shapes. Params, Result and Error.Data are the raw JSON
// received.
type Envelope struct {
	ID     mcp.ID
	Method string
	Params jsontext.Value
	Result jsontext.Value
	Error  *Error
}

// Error is a JSON-RPC error object: the fields of jsonrpc.Error, which
// converts to and from *Error.
type Error struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitzero"`
}

func errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// invalid is a -32600 error.
func invalid(format string, args ...any) *Error {
	return errorf(mcp.CodeInvalidRequest, "Invalid Request: "+format, args...)
}

// Decode parses one JSON-RPC message strictly: valid UTF-8, no duplicate
// member names, case-sensitive member names, at most maxBytes long and
// maxDepth deep (both must be positive), "jsonrpc":"2.0", a string or
// integer id (null is rejected on requests), and exactly one of the
// request, notification and response shapes. data is copied unless owned:
// the raw members of env are then slices of data, which must not change
// afterwards.
//
// On failure fail is the error to send back: mcp.CodeParseError for text
// that is not JSON (or breaks a limit), mcp.CodeInvalidRequest for JSON
// that is not a valid message; env then holds what was read before the
// failure, its ID valid when the id could be read, so the error response
// can carry it.
func Decode(data []byte, maxBytes, maxDepth int, owned bool) (env Envelope, fail *Error) {
	if len(data) > maxBytes {
		return env, errorf(mcp.CodeParseError, "Parse error: message of %d bytes exceeds the %d-byte limit", len(data), maxBytes)
	}
	// Invalid UTF-8 is rejected by the parse itself (decodeOpts), as
	// -32700: no separate pass over the message.
	// Nesting cannot exceed the length: a limit at least that large
	// needs no pass (the transports' own outgoing limits are unbounded).
	// Nor can it exceed the number of opening brackets, which a vector
	// count finds (in strings too) long before depth's scan would.
	if len(data) > maxDepth && openings(data) > maxDepth && depth(data) > maxDepth {
		return env, errorf(mcp.CodeParseError, "Parse error: nesting depth exceeds the limit of %d", maxDepth)
	}
	first := firstByte(data)
	if first == '[' {
		if !jsontext.Value(data).IsValid() {
			return env, &Error{Code: mcp.CodeParseError, Message: "Parse error: invalid JSON"}
		}
		return env, &Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request: batches are not supported"}
	}
	var w wireMessage
	if err := w.parse(data, owned); err != nil {
		if first != '{' && jsontext.Value(data).IsValid() {
			return env, &Error{Code: mcp.CodeInvalidRequest, Message: "Invalid Request: message must be a JSON object"}
		}
		return env, errorf(mcp.CodeParseError, "Parse error: %s", shortErr(err))
	}
	fail = w.shape(&env)
	return env, fail
}

// shape fills env from the members of a parsed envelope, or says which
// rule of the message shapes they break. The id is read first so that
// every later error can carry it.
func (w *wireMessage) shape(env *Envelope) *Error {
	if w.ID != nil && w.ID.Kind() != 'n' {
		id, err := mcp.ParseID(w.ID)
		if err != nil {
			if string(w.JSONRPC) != `"2.0"` {
				return invalid(`"jsonrpc" must be "2.0"`)
			}
			return invalid(`"id" must be a string or an integer`)
		}
		env.ID = id
	}
	if string(w.JSONRPC) != `"2.0"` {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	if w.Method != nil {
		return w.request(env)
	}
	return w.response(env)
}

// request is shape for an envelope with a method.
func (w *wireMessage) request(env *Envelope) *Error {
	if w.Method.Kind() != '"' {
		return invalid(`"method" must be a string`)
	}
	method, err := unquote(w.Method)
	if err != nil || method == "" {
		return invalid(`"method" must be a non-empty string`)
	}
	env.Method = method
	if w.ID != nil && w.ID.Kind() == 'n' {
		return invalid(`request "id" must not be null`)
	}
	if w.Result != nil || w.Error != nil {
		return invalid(`a request must not carry "result" or "error"`)
	}
	if w.Params != nil {
		if k := w.Params.Kind(); k != '{' && k != '[' {
			return invalid(`"params" must be an object or an array`)
		}
		env.Params = w.Params
	}
	return nil
}

// response is shape for an envelope without a method.
func (w *wireMessage) response(env *Envelope) *Error {
	if w.Params != nil {
		return invalid(`a response must not carry "params"`)
	}
	switch {
	case w.Result != nil && w.Error != nil:
		return invalid(`a response carries "result" or "error", not both`)
	case w.Result != nil:
		if !env.ID.IsValid() {
			return invalid(`a result response needs an "id"`)
		}
		env.Result = w.Result
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
			return invalid(`"error" must be an object with an integer "code" and a string "message"`)
		}
		env.Error = &Error{Code: *we.Code, Message: *we.Message, Data: we.Data}
	default:
		return invalid(`a message needs "method", "result" or "error"`)
	}
	return nil
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

// unquote decodes a JSON string the parse has checked. A string without
// escapes is its bytes; a method MCP names is its constant (no copy).
func unquote(raw jsontext.Value) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
		b := raw[1 : len(raw)-1]
		if name, ok := knownMethods[string(b)]; ok {
			return name, nil
		}
		return string(b), nil
	}
	var s string // only an escaped string takes this path (and its allocation)
	err := json.Unmarshal(raw, &s)
	return s, err
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
