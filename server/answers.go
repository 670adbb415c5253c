package server

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonschema"
	"github.com/mcpkit/mcpkit/internal/jsontok"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Checks of the client's answers to input requests: the 2026 wire's
// inputResponses (SEP-2322: "malformed inputResponses → JSON-RPC error")
// and the results a legacy client returns to the shim's and the
// handler's own elicitation/create, sampling/createMessage and
// roots/list requests. An answer must have the shape of the result of
// its method, and an accepted form elicitation's content must match the
// requestedSchema the server asked with; otherwise the request fails with
// -32602 naming the field, and the handler never sees the answer.

// urlForm marks, in a sealed state's forms, an elicitation asked in URL
// mode: its answer carries no content.
var urlForm = jsontext.Value("false")

// formOf returns what an answer check needs to know of an elicitation:
// its requestedSchema in form mode (nil when the handler gave none), or
// urlForm in URL mode.
func formOf(mode string, schema jsontext.Value) jsontext.Value {
	if mode == mcp.ElicitModeURL {
		return urlForm
	}
	return schema
}

// maxForms bounds the cache of compiled requestedSchemas. Forms are
// written by handlers, never by clients (a retry's schemas come from
// the sealed state), so the cache only grows with the number of distinct
// forms a server asks; past the bound, an entry is dropped.
const maxForms = 256

// formCache holds compiled requestedSchemas by their JSON text, so that
// a form is compiled once, not on every request that asks or answers it.
var formCache = struct {
	sync.Mutex
	m map[string]*jsonschema.Schema
}{m: make(map[string]*jsonschema.Schema)}

// compiledForm returns the compiled schema of a form elicitation's
// requestedSchema.
func compiledForm(schema jsontext.Value) (*jsonschema.Schema, error) {
	formCache.Lock()
	s, ok := formCache.m[string(schema)]
	formCache.Unlock()
	if ok {
		return s, nil
	}
	s, err := jsonschema.Compile(schema)
	if err != nil {
		return nil, err
	}
	formCache.Lock()
	if len(formCache.m) >= maxForms {
		for k := range formCache.m {
			delete(formCache.m, k)
			break
		}
	}
	formCache.m[string(schema)] = s
	formCache.Unlock()
	return s, nil
}

// checkForm verifies, before anyone is asked, that a form's
// requestedSchema compiles: an answer that cannot be checked is not
// asked for.
func checkForm(form jsontext.Value) error {
	if form == nil || bytes.Equal(form, urlForm) {
		return nil
	}
	if form.Kind() != '{' {
		return errors.New("requestedSchema must be an object")
	}
	_, err := compiledForm(form)
	return err
}

// badAnswer is what is wrong with an answer: at field (a path inside the
// answer, "" for the answer itself), msg.
type badAnswer struct {
	field, msg string
}

// at names the field under prefix, in the notation of the messages:
// inputResponses["k"].content.age: must be >= 0.
func (b *badAnswer) at(prefix string) string {
	if b.field == "" {
		return prefix + ": " + b.msg
	}
	return prefix + "." + b.field + ": " + b.msg
}

// checkAnswers validates the inputResponses of a 2026 retry and returns
// those the handler gets. asked (key → method) and forms (key →
// requestedSchema, or urlForm) come from the sealed requestState; an
// elicitation key without a form (a form with no schema, or a state
// sealed before forms were recorded) gets the shape check only.
//
// Every answer must be well formed: an answer to a key that was asked
// must be a result of that key's method, any other must be a result of
// one of the three methods (InputResponse in the schema); a malformed one
// is -32602. Answers to keys that were not asked are then dropped
// (SEP-2322: unknown keys are ignored). Without a state (asked nil)
// every answer is checked that way and none is returned: Server.upfront
// checks them again against the handler's questions.
func checkAnswers(got mcp.InputResponses, asked map[string]string, forms map[string]jsontext.Value) (mcp.InputResponses, error) {
	var out mcp.InputResponses
	var badKey string
	var bad *badAnswer
	for key, raw := range got {
		method, ok := asked[key]
		var b *badAnswer
		if ok {
			b = checkAnswer(method, forms[key], raw)
		} else {
			b = checkAnyAnswer(raw)
		}
		if b != nil {
			if bad == nil || key < badKey { // the first key in order, so the error is stable
				badKey, bad = key, b
			}
			continue
		}
		if !ok || bad != nil {
			continue // not asked: ignored (SEP-2322)
		}
		if out == nil {
			out = make(mcp.InputResponses, len(got))
		}
		out[key] = raw
	}
	if bad != nil {
		return nil, answersError(badKey, bad)
	}
	return out, nil
}

// answersError is the -32602 of a malformed inputResponses member.
func answersError(key string, bad *badAnswer) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: "+bad.at("inputResponses["+strconv.Quote(key)+"]"))
}

// checkResponses is the check of tasks/update (taskHost, for taskrun): each answer to
// an open request against its method and, for an elicitation, the form
// the task asked with (forms, as Input.forms); answers to other keys are
// dropped unchecked, as the tasks extension's update has them ignored.
func checkResponses(got mcp.InputResponses, asked map[string]string, forms map[string]jsontext.Value) (mcp.InputResponses, error) {
	var out mcp.InputResponses
	for key, raw := range got {
		method, ok := asked[key]
		if !ok {
			continue
		}
		if bad := checkAnswer(method, forms[key], raw); bad != nil {
			return nil, answersError(key, bad)
		}
		if out == nil {
			out = make(mcp.InputResponses, len(got))
		}
		out[key] = raw
	}
	return out, nil
}

// legAnswerError is the error of a request whose legacy client answered
// one of the server's requests with a malformed result: -32602, as for
// a malformed inputResponses member on the 2026 wire.
func legAnswerError(method string, bad *badAnswer) *jsonrpc.Error {
	where := "the client's " + method + " result"
	if bad.field != "" {
		where += ": " + bad.field
	}
	return jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: "+where+": "+bad.msg)
}

// checkAnyAnswer checks an answer to a key that was not asked: it must
// be one of the three results (InputResponse), told apart by their
// members.
func checkAnyAnswer(raw jsontext.Value) *badAnswer {
	var m answerMembers
	if bad := m.read(raw); bad != nil {
		return bad
	}
	switch {
	case m.action != nil:
		return m.check(mcp.MethodElicitationCreate, nil)
	case m.roots != nil:
		return m.check(mcp.MethodRootsList, nil)
	case m.role != nil || m.model != nil || m.content != nil:
		return m.check(mcp.MethodSamplingCreateMessage, nil)
	}
	return &badAnswer{msg: "must be an elicitation, sampling or roots result"}
}

// checkAnswer checks raw as the result of method; form is the
// elicitation's requestedSchema or urlForm (nil: no content check).
func checkAnswer(method string, form, raw jsontext.Value) *badAnswer {
	var m answerMembers
	if bad := m.read(raw); bad != nil {
		return bad
	}
	return m.check(method, form)
}

// answerMembers are the members of a result the checks look at, as raw
// slices of the answer (nil when absent); others are let through, as the
// schema's results allow.
type answerMembers struct {
	meta, action, content, role, model, stopReason, roots jsontext.Value
}

// read splits raw, which must be a JSON object (duplicate names are
// refused by the decoder).
func (m *answerMembers) read(raw jsontext.Value) *badAnswer {
	if raw.Kind() != '{' {
		return &badAnswer{msg: "must be an object"}
	}
	d := jsontok.New(raw)
	defer d.Release()
	if _, err := d.ReadToken(); err != nil {
		return invalidObject()
	}
	for d.PeekKind() != '}' {
		name, err := d.Name()
		if err != nil {
			return invalidObject()
		}
		v, err := d.Raw()
		if err != nil {
			return invalidObject()
		}
		switch string(name) {
		case "_meta":
			m.meta = v
		case "action":
			m.action = v
		case "content":
			m.content = v
		case "role":
			m.role = v
		case "model":
			m.model = v
		case "stopReason":
			m.stopReason = v
		case "roots":
			m.roots = v
		}
	}
	if err := d.End(); err != nil {
		return invalidObject()
	}
	return nil
}

func invalidObject() *badAnswer { return &badAnswer{msg: "must be a valid JSON object"} }

func (m *answerMembers) check(method string, form jsontext.Value) *badAnswer {
	if m.meta != nil && m.meta.Kind() != '{' {
		return &badAnswer{field: "_meta", msg: "must be an object"}
	}
	switch method {
	case mcp.MethodElicitationCreate:
		return m.checkElicitResult(form)
	case mcp.MethodSamplingCreateMessage:
		return m.checkCreateMessageResult()
	case mcp.MethodRootsList:
		return m.checkListRootsResult()
	}
	return &badAnswer{msg: "answers no known input request method " + strconv.Quote(method)}
}

// stringIs reports whether v is the JSON string s.
func stringIs(v jsontext.Value, s string) bool {
	if v.Kind() != '"' {
		return false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1:len(v)-1]) == s
	}
	u, err := jsontext.AppendUnquote(nil, v)
	return err == nil && string(u) == s
}

// clip quotes at most 40 bytes of a client's value in an error message.
func clip(v jsontext.Value) string {
	if len(v) > 40 {
		return strings.ToValidUTF8(string(v[:40]), "") + "…"
	}
	return string(v)
}

// checkElicitResult: action is accept, decline or cancel; content comes
// only with accept, is an object of strings, numbers, booleans and
// arrays of strings, and matches the form's requestedSchema; a URL-mode
// elicitation's answer has no content (ElicitResult: "only present when
// action is accept and mode was form").
func (m *answerMembers) checkElicitResult(form jsontext.Value) *badAnswer {
	if m.action == nil {
		return &badAnswer{field: "action", msg: "missing"}
	}
	accept := stringIs(m.action, mcp.ElicitActionAccept)
	if !accept && !stringIs(m.action, mcp.ElicitActionDecline) && !stringIs(m.action, mcp.ElicitActionCancel) {
		return &badAnswer{field: "action", msg: `must be "accept", "decline" or "cancel", not ` + clip(m.action)}
	}
	content := m.content
	isURL := bytes.Equal(form, urlForm)
	switch {
	case content == nil && (!accept || form == nil || isURL):
		return nil
	case content == nil:
		content = jsontext.Value("{}") // an accepted form without content: checked as empty
	case !accept:
		return &badAnswer{field: "content", msg: `only allowed when action is "accept"`}
	case isURL:
		return &badAnswer{field: "content", msg: "not allowed: the elicitation was in URL mode"}
	default:
		if bad := checkContentValues(content); bad != nil {
			return bad
		}
	}
	if form == nil {
		return nil
	}
	s, err := compiledForm(form)
	if err != nil {
		// Cannot happen: forms are compiled before they are asked.
		return &badAnswer{field: "content", msg: "cannot be checked: " + err.Error()}
	}
	if err := s.Validate(content); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			msg := ve.Message + ve.OthersText()
			return &badAnswer{field: "content" + pointerPath(ve.Location), msg: msg}
		}
		return &badAnswer{field: "content", msg: err.Error()}
	}
	return nil
}

// checkContentValues checks the shape ElicitResult gives content: an
// object whose values are strings, numbers, booleans or arrays of
// strings.
func checkContentValues(content jsontext.Value) *badAnswer {
	if content.Kind() != '{' {
		return &badAnswer{field: "content", msg: "must be an object"}
	}
	d := jsontok.New(content)
	defer d.Release()
	if _, err := d.ReadToken(); err != nil {
		return &badAnswer{field: "content", msg: "must be an object"}
	}
	for d.PeekKind() != '}' {
		name, err := d.Name()
		if err != nil {
			return &badAnswer{field: "content", msg: "must be an object"}
		}
		v, err := d.Raw()
		if err != nil {
			return &badAnswer{field: "content", msg: "must be an object"}
		}
		switch v.Kind() {
		case '"', '0', 't', 'f':
			continue
		case '[':
			if arrayOfStrings(v) {
				continue
			}
		}
		return &badAnswer{field: "content" + pointerPath("/"+escapePointer(string(name))), msg: "must be a string, number, boolean or array of strings"}
	}
	return nil
}

func arrayOfStrings(v jsontext.Value) bool {
	d := jsontok.New(v)
	defer d.Release()
	if _, err := d.ReadToken(); err != nil {
		return false
	}
	for d.PeekKind() != ']' {
		if d.PeekKind() != '"' {
			return false
		}
		if err := d.SkipValue(); err != nil {
			return false
		}
	}
	return true
}

// checkCreateMessageResult: role, a non-empty model and content (one
// sampling content block or an array of them) are required.
func (m *answerMembers) checkCreateMessageResult() *badAnswer {
	if !stringIs(m.role, string(mcp.RoleUser)) && !stringIs(m.role, string(mcp.RoleAssistant)) {
		return &badAnswer{field: "role", msg: `must be "user" or "assistant"`}
	}
	if m.model.Kind() != '"' || len(m.model) == 2 {
		return &badAnswer{field: "model", msg: "must be a non-empty string"}
	}
	if m.content == nil {
		return &badAnswer{field: "content", msg: "missing"}
	}
	var c mcp.SamplingContent
	if k := m.content.Kind(); k != '{' && k != '[' || json.Unmarshal(m.content, &c) != nil {
		return &badAnswer{field: "content", msg: "must be a sampling content block or an array of them"}
	}
	if m.stopReason != nil && m.stopReason.Kind() != '"' {
		return &badAnswer{field: "stopReason", msg: "must be a string"}
	}
	return nil
}

// checkListRootsResult: roots is an array of objects with a non-empty
// uri and an optional string name.
func (m *answerMembers) checkListRootsResult() *badAnswer {
	if m.roots == nil {
		return &badAnswer{field: "roots", msg: "missing"}
	}
	var list []jsontext.Value
	if m.roots.Kind() != '[' || json.Unmarshal(m.roots, &list) != nil {
		return &badAnswer{field: "roots", msg: "must be an array"}
	}
	for i, r := range list {
		field := "roots[" + strconv.Itoa(i) + "]"
		if r.Kind() != '{' {
			return &badAnswer{field: field, msg: "must be an object"}
		}
		var root struct {
			URI  jsontext.Value `json:"uri"`
			Name jsontext.Value `json:"name"`
			Meta jsontext.Value `json:"_meta"`
		}
		if json.Unmarshal(r, &root) != nil {
			return &badAnswer{field: field, msg: "must be a valid JSON object"}
		}
		if root.URI.Kind() != '"' || len(root.URI) == 2 {
			return &badAnswer{field: field + ".uri", msg: "must be a non-empty string"}
		}
		if root.Name != nil && root.Name.Kind() != '"' {
			return &badAnswer{field: field + ".name", msg: "must be a string"}
		}
		if root.Meta != nil && root.Meta.Kind() != '{' {
			return &badAnswer{field: field + "._meta", msg: "must be an object"}
		}
	}
	return nil
}

// pointerPath turns a JSON pointer into the path notation of the error
// messages: "/age" → ".age", "/tags/1" → ".tags[1]", a name that is not
// an identifier → `["a b"]`.
func pointerPath(ptr string) string {
	if ptr == "" {
		return ""
	}
	var b strings.Builder
	for i, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch {
		case i > 0 && isIndex(tok):
			b.WriteString("[" + tok + "]")
		case isIdent(tok):
			b.WriteString("." + tok)
		default:
			b.WriteString("[" + strconv.Quote(tok) + "]")
		}
	}
	return b.String()
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}
