package jsonschema

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// jsonOptions are the go-json-experiment options of a `json` struct tag.
type jsonOptions struct {
	name      string
	hasName   bool
	omitzero  bool
	omitempty bool
	string    bool
	embed     bool
	format    string
}

// parseJSONTag reads the `json` tag of sf like go-json-experiment does.
func parseJSONTag(sf reflect.StructField) (opts jsonOptions, ignored bool, err error) {
	tag, hasTag := sf.Tag.Lookup("json")
	if tag == "-" {
		return opts, true, nil
	}
	if !sf.IsExported() && !sf.Anonymous {
		if hasTag {
			return opts, true, fmt.Errorf("unexported field %s cannot have a json tag", sf.Name)
		}
		return opts, true, nil
	}
	opts.name = sf.Name
	if tag != "" && tag[0] != ',' {
		name, rest, err := cutTagOption(tag)
		if err != nil {
			return opts, false, fmt.Errorf("field %s: malformed json tag: %w", sf.Name, err)
		}
		opts.name, opts.hasName, tag = name, true, rest
	}
	for tag != "" {
		tag = tag[1:] // the comma
		opt, rest, err := cutTagOption(tag)
		if err != nil {
			return opts, false, fmt.Errorf("field %s: malformed json tag: %w", sf.Name, err)
		}
		tag = rest
		switch {
		case opt == "omitzero":
			opts.omitzero = true
		case opt == "omitempty":
			opts.omitempty = true
		case opt == "string":
			opts.string = true
		case opt == "embed":
			opts.embed = true
		case strings.HasPrefix(opt, "format:"):
			opts.format = strings.TrimPrefix(opt, "format:")
		}
	}
	return opts, false, nil
}

// cutTagOption returns the json tag option at the start of s (unquoting a
// single-quoted option, or the value of a single-quoted format) and the
// rest of s, which is empty or starts with a comma.
func cutTagOption(s string) (opt, rest string, err error) {
	prefix := ""
	if strings.HasPrefix(s, "format:'") {
		prefix, s = "format:", s[len("format:"):]
	}
	if !strings.HasPrefix(s, "'") {
		i := strings.IndexByte(s, ',')
		if i < 0 {
			i = len(s)
		}
		return prefix + s[:i], s[i:], nil
	}
	// Single-quoted, with Go escapes: rewrite as a double-quoted literal.
	b := []byte{'"'}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 < len(s) && s[i+1] == '\'' {
				b = append(b, '\'')
				i++
				continue
			}
			b = append(b, c)
			if i+1 < len(s) {
				b = append(b, s[i+1])
				i++
			}
		case '"':
			b = append(b, '\\', '"')
		case '\'':
			u, err := strconv.Unquote(string(append(b, '"')))
			if err != nil {
				return "", "", err
			}
			return prefix + u, s[i+1:], nil
		default:
			b = append(b, c)
		}
	}
	return "", "", errors.New("unterminated single-quoted name")
}

// structField is a JSON member of a struct, possibly promoted from an
// embedded struct.
type structField struct {
	sf     reflect.StructField
	index  []int
	opts   jsonOptions
	viaPtr bool // promoted through an embedded pointer: absent when it is nil
}

// structNode returns the object schema of struct type t.
func (in *inferrer) structNode(t reflect.Type, path string) (*node, error) {
	fields, fallback, err := structFields(t)
	if err != nil {
		return nil, fmt.Errorf("%s%w", at(path), err)
	}
	n := &node{typ: "object", object: true, closed: true}
	for _, f := range fields {
		fpath := fieldPath(path, f.sf.Name)
		fn, err := in.typeNode(f.sf.Type, f.opts, fpath)
		if err != nil {
			return nil, err
		}
		required := !f.opts.omitzero && !f.opts.omitempty && !f.viaPtr && f.sf.Type.Kind() != reflect.Pointer
		if tag, ok := f.sf.Tag.Lookup("jsonschema"); ok {
			if isKeyValueTag(tag) {
				in.inexact = true // keywords an instance must meet
			}
			override, err := applyTag(fn, tag)
			if err != nil {
				return nil, fmt.Errorf("%sjsonschema tag %q: %w", at(fpath), tag, err)
			}
			switch override {
			case forceRequired:
				required = true
			case forceOptional:
				required = false
			}
		}
		n.properties = append(n.properties, property{name: f.opts.name, schema: fn})
		if required {
			n.required = append(n.required, f.opts.name)
		}
	}
	if fallback != nil {
		n.closed = false
		if ft := deref(fallback.sf.Type); ft.Kind() == reflect.Map {
			n.additional, err = in.typeNode(ft.Elem(), jsonOptions{}, fieldPath(path, fallback.sf.Name)+"[]")
			if err != nil {
				return nil, err
			}
		}
	}
	return n, nil
}

// structFields lists the JSON members of struct type root in marshal order,
// flattening embedded structs with the go-json-experiment dominance rules.
// fallback is the dominant embedded map or jsontext.Value, if any.
func structFields(root reflect.Type) (fields []structField, fallback *structField, err error) {
	type entry struct {
		t      reflect.Type
		index  []int
		viaPtr bool
		visit  bool
	}
	queue := []entry{{t: root, visit: true}}
	seen := map[reflect.Type]bool{root: true}
	var all, fallbacks []structField
	for qi := 0; qi < len(queue); qi++ {
		e := queue[qi]
		names := map[string]string{}
		hasTag, hasField := false, false
		for i := range e.t.NumField() {
			sf := e.t.Field(i)
			_, tagged := sf.Tag.Lookup("json")
			hasTag = hasTag || tagged
			opts, ignored, err := parseJSONTag(sf)
			if err != nil {
				return nil, nil, err
			}
			if ignored {
				continue
			}
			hasField = true
			f := structField{sf: sf, index: append(slices.Clip(e.index), i), opts: opts, viaPtr: e.viaPtr}
			ft := sf.Type
			if ft.Kind() == reflect.Pointer && ft.Name() == "" {
				ft = ft.Elem()
			}
			if sf.Anonymous && !opts.hasName {
				if ft.Kind() != reflect.Struct {
					return nil, nil, fmt.Errorf("embedded field %s of non-struct type must have a JSON name", sf.Name)
				}
				opts.embed = true
			}
			if opts.embed {
				isStruct, err := checkEmbedded(sf, ft)
				if err != nil {
					return nil, nil, err
				}
				if !isStruct {
					fallbacks = append(fallbacks, f)
					continue
				}
				if e.visit {
					queue = append(queue, entry{ft, f.index, e.viaPtr || sf.Type.Kind() == reflect.Pointer, !seen[ft]})
				}
				seen[ft] = true
				continue
			}
			if !sf.IsExported() {
				return nil, nil, fmt.Errorf("field %s is not exported", sf.Name)
			}
			if prev, dup := names[opts.name]; dup {
				return nil, nil, fmt.Errorf("fields %s and %s conflict over JSON name %q", prev, sf.Name, opts.name)
			}
			names[opts.name] = sf.Name
			all = append(all, f)
		}
		if e.t.NumField() > 0 && !hasTag && !hasField {
			return nil, nil, fmt.Errorf("%v has no exported fields", e.t)
		}
	}

	fields = dominant(all)
	slices.SortFunc(fields, func(x, y structField) int { return slices.Compare(x.index, y.index) })
	if n := len(fallbacks); n == 1 || n > 1 && len(fallbacks[0].index) != len(fallbacks[1].index) {
		fallback = &fallbacks[0]
	}
	return fields, fallback, nil
}

// checkEmbedded checks an embedded field (of type ft, a pointer's
// element): a struct to flatten (isStruct), or an exported map with
// string keys or jsontext.Value that takes the unknown members.
func checkEmbedded(sf reflect.StructField, ft reflect.Type) (isStruct bool, err error) {
	if _, ok := sf.Tag.Lookup("jsonschema"); ok {
		return false, fmt.Errorf("embedded field %s cannot have a jsonschema tag", sf.Name)
	}
	switch {
	case ft.Kind() == reflect.Struct:
		if implementsAny(ft, marshalerTypes) || implementsAny(ft, textMarshalerTypes) || ft == timeType {
			return false, fmt.Errorf("embedded field %s of type %v must not implement marshal methods", sf.Name, ft)
		}
		return true, nil
	case !sf.IsExported():
		return false, fmt.Errorf("embedded field %s is not exported", sf.Name)
	case ft == jsontextValueType || ft.Kind() == reflect.Map && ft.Key().Kind() == reflect.String:
		return false, nil
	}
	return false, fmt.Errorf("embedded field %s of type %v must be a struct, a map with string keys or a jsontext.Value", sf.Name, ft)
}

// dominant keeps, for each name, the field alone at the shallowest depth
// or the one uniquely tagged with the name, and drops the others.
func dominant(all []structField) (fields []structField) {
	slices.SortStableFunc(all, func(x, y structField) int {
		return cmp.Or(strings.Compare(x.opts.name, y.opts.name),
			cmp.Compare(len(x.index), len(y.index)),
			cmpBool(y.opts.hasName, x.opts.hasName))
	})
	for len(all) > 0 {
		n := 1
		for n < len(all) && all[n].opts.name == all[0].opts.name {
			n++
		}
		if n == 1 || len(all[0].index) != len(all[1].index) || all[0].opts.hasName != all[1].opts.hasName {
			fields = append(fields, all[0])
		}
		all = all[n:]
	}
	return fields
}

func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}
