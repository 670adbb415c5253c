package wirecheck

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type messageKind int

const (
	kindRequest messageKind = iota
	kindNotification
	kindResult
	kindError
)

func (k messageKind) String() string {
	return [...]string{"request", "notification", "result response", "error response"}[k]
}

// envelope is a JSON-RPC message split into its members.
type envelope struct {
	kind   messageKind
	method string
	id     jsontext.Value // nil when absent
	params jsontext.Value
	result jsontext.Value
}

// parseEnvelope classifies a message: a request has a method and an id, a
// notification a method and no id, a response a result or an error.
func parseEnvelope(msg []byte) (*envelope, error) {
	var m struct {
		Method jsontext.Value `json:"method"`
		ID     jsontext.Value `json:"id"`
		Params jsontext.Value `json:"params"`
		Result jsontext.Value `json:"result"`
		Error  jsontext.Value `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC message: %w", err)
	}
	env := &envelope{id: m.ID, params: m.Params, result: m.Result}
	switch {
	case m.Method != nil:
		if err := json.Unmarshal(m.Method, &env.method); err != nil || m.Method.Kind() != '"' {
			return nil, fmt.Errorf("not a JSON-RPC message: method is %s, not a string", m.Method)
		}
		env.kind = kindNotification
		if m.ID != nil {
			env.kind = kindRequest
		}
	case m.Error != nil:
		env.kind = kindError
	case m.Result != nil:
		env.kind = kindResult
	default:
		return nil, errors.New("not a JSON-RPC message: no method, result or error")
	}
	return env, nil
}

// idKey is the canonical text of the id, so that 1 and 1.0 match but 1
// and "1" do not.
func (e *envelope) idKey() string {
	v := slices.Clone(e.id)
	if err := v.Canonicalize(); err != nil {
		return string(e.id)
	}
	return string(v)
}

func (e *envelope) nullID() bool { return e.id == nil || string(e.id) == "null" }

// taskAugmented reports whether a request asks for a task (2025-11-25).
func (e *envelope) taskAugmented() bool {
	var p map[string]jsontext.Value
	if e.params == nil || json.Unmarshal(e.params, &p) != nil {
		return false
	}
	_, ok := p["task"]
	return ok
}
