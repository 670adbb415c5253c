package jsonschema

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

var (
	timeType          = reflect.TypeFor[time.Time]()
	durationType      = reflect.TypeFor[time.Duration]()
	jsontextValueType = reflect.TypeFor[jsontext.Value]()
	marshalerTypes    = []reflect.Type{
		reflect.TypeFor[json.Marshaler](),
		reflect.TypeFor[json.MarshalerTo](),
	}
	textMarshalerTypes = []reflect.Type{
		reflect.TypeFor[encoding.TextMarshaler](),
		reflect.TypeFor[encoding.TextAppender](),
	}
)

// inferCache holds the encoded schema of every type inferred so far.
var inferCache sync.Map // reflect.Type → inferred

// inferred is a type's schema, and whether json.Marshal can only write
// instances of it (Implied).
type inferred struct {
	schema jsontext.Value
	exact  bool
}

// For returns the JSON Schema of T. See the package documentation for the
// mapping and the `jsonschema` struct tag.
func For[T any]() (jsontext.Value, error) {
	return ForType(reflect.TypeFor[T]())
}

// ForType returns the JSON Schema of t as compact JSON. The result is a fresh
// copy that the caller may modify.
func ForType(t reflect.Type) (jsontext.Value, error) {
	if t == nil {
		return nil, errors.New("jsonschema: nil type")
	}
	v, err := infer(t)
	if err != nil {
		return nil, err
	}
	return slices.Clone(v.schema), nil
}

// Implied reports whether every value of t that json.Marshal encodes is
// an instance of ForType(t), so that checking one is redundant: true
// when the schema says only what the type itself guarantees (types,
// properties, required, closed objects, array lengths, the minimum of
// unsigned integers). It is false as soon as a nil pointer could be
// written as null (a pointer that is not an omitzero or omitempty
// field), a jsonschema tag adds a keyword other than a description
// (bounds, enums, patterns, required…), or a time.Duration appears.
// A type ForType refuses is an error.
func Implied(t reflect.Type) (bool, error) {
	if t == nil {
		return false, errors.New("jsonschema: nil type")
	}
	v, err := infer(t)
	if err != nil {
		return false, err
	}
	return v.exact, nil
}

// infer returns t's cached inference, inferring it first if need be.
func infer(t reflect.Type) (inferred, error) {
	if v, ok := inferCache.Load(t); ok {
		return v.(inferred), nil
	}
	in := &inferrer{
		root:   deref(t),
		active: map[reflect.Type]bool{},
		defs:   map[reflect.Type]*definition{},
		names:  map[string]bool{},
	}
	n, err := in.typeNode(t, jsonOptions{}, "")
	if err != nil {
		return inferred{}, fmt.Errorf("jsonschema: type %v: %w", t, err)
	}
	n.defs = in.defList
	v, err := n.encode()
	if err != nil {
		return inferred{}, fmt.Errorf("jsonschema: encoding schema of %v: %w", t, err)
	}
	out := inferred{schema: v, exact: !in.inexact}
	inferCache.Store(t, out)
	return out, nil
}

// inferrer holds the state of one ForType call.
type inferrer struct {
	root    reflect.Type
	active  map[reflect.Type]bool // named types being expanded
	defs    map[reflect.Type]*definition
	defList []*definition
	names   map[string]bool // $defs names in use
	// inexact is set when the schema asks more of an instance than the
	// type guarantees (see Implied).
	inexact bool
}

// at prefixes an error about the field at path: "field A.B: ", or nothing
// for the root type.
func at(path string) string {
	if path == "" {
		return ""
	}
	return "field " + path + ": "
}

// fieldPath is the path of field name inside path.
func fieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func implementsAny(t reflect.Type, ifaces []reflect.Type) bool {
	for _, i := range ifaces {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// typeNode returns the schema of t; opts are the json tag options of the
// field holding it and path names the field for error messages: the Go
// field names from the root type, joined with dots ("" for the root
// itself, "[]" for an element); see at.
func (in *inferrer) typeNode(t reflect.Type, opts jsonOptions, path string) (*node, error) {
	if t.Kind() == reflect.Pointer && !opts.omitzero && !opts.omitempty {
		in.inexact = true // nil is written as null
	}
	t = deref(t)
	switch t {
	case timeType:
		return timeNode(opts.format), nil
	case durationType:
		in.inexact = true
		return durationNode(opts.format, path)
	case jsontextValueType:
		return &node{}, nil
	}
	if implementsAny(t, marshalerTypes) {
		return &node{}, nil // custom JSON: shape unknown
	}
	if implementsAny(t, textMarshalerTypes) {
		return &node{typ: "string"}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &node{typ: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if opts.string {
			return &node{typ: "string"}, nil
		}
		return &node{typ: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if opts.string {
			return &node{typ: "string"}, nil
		}
		return &node{typ: "integer", minimum: jsontext.Value("0")}, nil
	case reflect.Float32, reflect.Float64:
		if opts.string {
			return &node{typ: "string"}, nil
		}
		return &node{typ: "number"}, nil
	case reflect.String:
		return &node{typ: "string"}, nil
	case reflect.Interface:
		return &node{}, nil
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
		return in.namedNode(t, opts, path)
	}
	return nil, fmt.Errorf("%sunsupported type %v", at(path), t)
}

// namedNode expands a composite type, handling recursion through $defs.
func (in *inferrer) namedNode(t reflect.Type, opts jsonOptions, path string) (*node, error) {
	if t.Name() == "" {
		return in.compositeNode(t, opts, path)
	}
	if d := in.defs[t]; d != nil && d.schema != nil {
		return &node{ref: "#/$defs/" + d.name}, nil
	}
	if in.active[t] {
		if t == in.root {
			return &node{ref: "#"}, nil
		}
		d := in.defs[t]
		if d == nil {
			d = &definition{name: in.defName(t)}
			in.defs[t] = d
			in.defList = append(in.defList, d)
		}
		return &node{ref: "#/$defs/" + d.name}, nil
	}
	in.active[t] = true
	n, err := in.compositeNode(t, opts, path)
	delete(in.active, t)
	if err != nil {
		return nil, err
	}
	if d := in.defs[t]; d != nil {
		d.schema = n
		return &node{ref: "#/$defs/" + d.name}, nil
	}
	return n, nil
}

// defName picks a unique, URI-safe $defs name for t.
func (in *inferrer) defName(t reflect.Type) string {
	base := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, t.Name())
	name := base
	for i := 2; in.names[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	in.names[name] = true
	return name
}

func (in *inferrer) compositeNode(t reflect.Type, opts jsonOptions, path string) (*node, error) {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && !implementsAny(t.Elem(), marshalerTypes) && !implementsAny(t.Elem(), textMarshalerTypes) {
			if n, ok := bytesNode(opts.format); ok {
				return n, nil
			}
		}
		items, err := in.typeNode(t.Elem(), jsonOptions{}, path+"[]")
		if err != nil {
			return nil, err
		}
		n := &node{typ: "array", items: items}
		if t.Kind() == reflect.Array {
			n.minItems, n.maxItems = uintPtr(uint64(t.Len())), uintPtr(uint64(t.Len()))
		}
		return n, nil
	case reflect.Map:
		n := &node{typ: "object"}
		k := t.Key()
		switch {
		case implementsAny(k, textMarshalerTypes) || k.Kind() == reflect.String:
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Int64:
			n.propertyNames = &node{pattern: "^-?[0-9]+$"}
		case k.Kind() >= reflect.Uint && k.Kind() <= reflect.Uintptr:
			n.propertyNames = &node{pattern: "^[0-9]+$"}
		default:
			return nil, fmt.Errorf("%sunsupported map key type %v", at(path), k)
		}
		elem, err := in.typeNode(t.Elem(), jsonOptions{}, path+"[]")
		if err != nil {
			return nil, err
		}
		n.additional = elem
		return n, nil
	}
	return in.structNode(t, path)
}

// timeNode follows the json format option of a time.Time field.
func timeNode(format string) *node {
	switch format {
	case "", "RFC3339", "RFC3339Nano":
		return &node{typ: "string", format: "date-time"}
	case "unix", "unixmilli", "unixmicro", "unixnano":
		return &node{typ: "number"}
	}
	return &node{typ: "string"}
}

// durationNode follows the json format option of a time.Duration field;
// like json.Marshal it refuses a duration without one.
func durationNode(format, path string) (*node, error) {
	switch format {
	case "units":
		return &node{typ: "string"}, nil
	case "iso8601":
		return &node{typ: "string", format: "duration"}, nil
	case "sec", "milli", "micro", "nano":
		return &node{typ: "number"}, nil
	case "":
		return nil, fmt.Errorf("%stime.Duration has no default JSON representation; add a json format option (e.g. `json:\",format:units\"`)", at(path))
	}
	return nil, fmt.Errorf("%sunknown time.Duration format %q", at(path), format)
}

// bytesNode follows the json format option of a []byte or [N]byte field;
// ok is false for format:array (an array of integers).
func bytesNode(format string) (n *node, ok bool) {
	switch format {
	case "", "base64":
		return &node{typ: "string", contentEncoding: "base64"}, true
	case "base64url", "base32", "base32hex":
		return &node{typ: "string", contentEncoding: format}, true
	case "base16", "hex":
		return &node{typ: "string", contentEncoding: "base16"}, true
	}
	return nil, false
}
