package server

import (
	"fmt"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsontok"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// wireParams is the params object of any client request, decoded once:
// every member a method may use, each kept raw or as a plain value, so
// that the era of the request (its _meta envelope), the SEP-2243 header
// checks and the method itself all read the same single decode. Nested
// values (arguments, capabilities, filters) stay raw until the code that
// knows their type decodes them.
type wireParams struct {
	Meta           mcp.Meta           `json:"_meta"`
	Name           string             `json:"name"`
	URI            string             `json:"uri"`
	Arguments      jsontext.Value     `json:"arguments"`
	Cursor         *string            `json:"cursor"`
	InputResponses mcp.InputResponses `json:"inputResponses"`
	RequestState   string             `json:"requestState"`
	TaskID         string             `json:"taskId"`
	// The members few methods have, made only when one is present (a
	// tools/call or a session's request is then smaller to allocate).
	*wireRare `json:"-"`

	raw jsontext.Value // params as a whole (extension methods decode it)
	// env holds the envelope's members of _meta, lifted out of Meta by
	// the decoder (so that a request whose _meta holds nothing else makes
	// no map); nil when _meta has none. liftEnvelope decodes them.
	env *envelope
}

// wireRare holds the raw members of params only some methods read.
type wireRare struct {
	Task          jsontext.Value `json:"task"`
	Ref           jsontext.Value `json:"ref"`
	Argument      jsontext.Value `json:"argument"`
	Context       jsontext.Value `json:"context"`
	Level         jsontext.Value `json:"level"`
	Notifications jsontext.Value `json:"notifications"`
}

// rare returns wp's rare members, making them first.
func (wp *wireParams) rare() *wireRare {
	if wp.wireRare == nil {
		wp.wireRare = new(wireRare)
	}
	return wp.wireRare
}

// stringField is where the string member key goes, and its name; nil
// for any other member (parse and fastParse share it).
func (wp *wireParams) stringField(key []byte) (string, *string) {
	switch string(key) {
	case "name":
		return "name", &wp.Name
	case "uri":
		return "uri", &wp.URI
	case "requestState":
		return "requestState", &wp.RequestState
	case "taskId":
		return "taskId", &wp.TaskID
	}
	return "", nil
}

// rawField is where the member key kept raw goes, a rare one's storage
// made then; nil for any other member (parse and fastParse share it).
func (wp *wireParams) rawField(key []byte) *jsontext.Value {
	switch string(key) {
	case "arguments":
		return &wp.Arguments
	case "task":
		return &wp.rare().Task
	case "ref":
		return &wp.rare().Ref
	case "argument":
		return &wp.rare().Argument
	case "context":
		return &wp.rare().Context
	case "level":
		return &wp.rare().Level
	case "notifications":
		return &wp.rare().Notifications
	}
	return nil
}

// rareOf returns wp's rare members to read: the shared zero set when
// none was present (never written to).
func (wp *wireParams) rareOf() *wireRare {
	if wp.wireRare == nil {
		return &noRare
	}
	return wp.wireRare
}

var noRare wireRare

// decodeWire decodes params (absent: the empty object) once, by hand:
// one pass of the token decoder, no reflection, the raw members sharing
// the bytes of params (which the message owns). It accepts and rejects
// what json.Unmarshal into wireParams would (a fuzz test holds it to
// that): duplicate names and invalid UTF-8 are errors, names match
// exactly, unknown members are ignored, null leaves a member zero.
func decodeWire(raw jsontext.Value) (*wireParams, error) {
	return decodeWireWith(raw)
}

// decodeWireOf is decodeWire for the params of a message jsonrpc decoded:
// that decode has checked them whole (well-formed, valid UTF-8, no
// duplicate names at any depth), so this pass does not check again.
func decodeWireOf(msg *jsonrpc.Message) (*wireParams, error) {
	if raw := msg.Params; raw.Kind() == '{' {
		wp := &wireParams{raw: raw}
		if wp.fastParse(raw) {
			return wp, nil
		}
	}
	return decodeWireWith(msg.Params, decodedOpts)
}

// decodedOpts skip the checks jsonrpc's decode has made.
var decodedOpts = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

func decodeWireWith(raw jsontext.Value, opts ...jsontext.Options) (*wireParams, error) {
	wp := &wireParams{raw: raw}
	if raw == nil {
		return wp, nil
	}
	if raw.Kind() != '{' {
		return nil, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: params must be an object")
	}
	if err := wp.parse(raw, opts...); err != nil {
		return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: %s", seam.ShortErr(err))
	}
	return wp, nil
}

func (wp *wireParams) parse(raw jsontext.Value, opts ...jsontext.Options) error {
	d := jsontok.New(raw, opts...)
	defer d.Release()
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	for d.PeekKind() != '}' {
		key, err := d.Name()
		if err != nil {
			return err
		}
		var dst *jsontext.Value
		switch string(key) {
		case "_meta":
			wp.Meta, err = parseMeta(d, &wp.env)
		case "cursor":
			if d.PeekKind() == 'n' {
				_, err = d.ReadToken()
				wp.Cursor = nil
				break
			}
			var c string
			if err = readString(d, "cursor", &c); err == nil {
				wp.Cursor = &c
			}
		case "inputResponses":
			err = json.UnmarshalDecode(&d.Decoder, &wp.InputResponses)
		default:
			if name, str := wp.stringField(key); str != nil {
				err = readString(d, name, str)
			} else if dst = wp.rawField(key); dst == nil {
				err = d.SkipValue()
			}
		}
		if err != nil {
			return err
		}
		if dst != nil {
			if *dst, err = d.Raw(); err != nil {
				return err
			}
		}
	}
	return d.End()
}

// parseMeta reads a _meta object as mcp.Meta's UnmarshalJSONFrom does
// (null is nil; every value kept raw), its values sharing the bytes of
// params instead of each a copy — except the envelope's members, which go
// to env instead. The map is made for the first other member: nil when
// there is none.
func parseMeta(d *jsontok.Decoder, env **envelope) (mcp.Meta, error) {
	if d.PeekKind() != '{' {
		var m mcp.Meta
		err := m.UnmarshalJSONFrom(&d.Decoder) // null, or the error for anything else
		return m, err
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, err
	}
	var m mcp.Meta
	for d.PeekKind() != '}' {
		name, err := metaName(d)
		if err != nil {
			return nil, err
		}
		raw, err := d.Raw()
		if err != nil {
			return nil, err
		}
		if dst := envelopeMember(env, name); dst != nil {
			*dst = raw
			continue
		}
		if m == nil {
			m = make(mcp.Meta, 2)
		}
		m[name] = raw
	}
	_, err := d.ReadToken()
	return m, err
}

// readString reads a string member; null leaves it as it is (zero).
func readString(d *jsontok.Decoder, name string, dst *string) error {
	tok, err := d.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case '"':
		*dst = tok.String()
	case 'n':
		*dst = ""
	default:
		return fmt.Errorf("%s must be a string", name)
	}
	return nil
}

// decodeMember decodes one raw member into v; absent leaves v as it is.
func decodeMember(name string, raw jsontext.Value, v any) error {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: %s: %s", name, seam.ShortErr(err))
	}
	return nil
}

// metaName reads a _meta member name (a reserved one without allocating:
// knownMetaName).
func metaName(d *jsontok.Decoder) (string, error) {
	b, err := d.Name()
	if err != nil {
		return "", err
	}
	return knownMetaName(b), nil
}
