package jsonschema

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// isKeyValueTag reports whether a `jsonschema` tag is in the key=value
// form rather than a plain description. It is when, after leading spaces,
// the tag starts with a word (an ASCII letter, then letters, digits or
// underscores) followed by "=" (spaces allowed before the "="), or when
// its first comma-separated item, spaces trimmed, is the flag required or
// optional. Any other tag is the field's description, verbatim. A word
// followed by "=" that is not a known key is an error, not a description,
// so that a misspelled key never silently turns into documentation.
func isKeyValueTag(tag string) bool {
	s := strings.TrimLeft(tag, " ")
	first, _, _ := strings.Cut(s, ",")
	if f := strings.TrimSpace(first); f == "required" || f == "optional" {
		return true
	}
	i := wordLen(s)
	return i > 0 && strings.HasPrefix(strings.TrimLeft(s[i:], " "), "=")
}

// wordLen is the length of the word at the start of s: an ASCII letter,
// then letters, digits or underscores (0 when s does not start with one).
func wordLen(s string) int {
	i := 0
	for i < len(s) && (isLetter(s[i]) || i > 0 && (s[i] == '_' || '0' <= s[i] && s[i] <= '9')) {
		i++
	}
	return i
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// tagItem is one key[=value] item of a `jsonschema` struct tag.
type tagItem struct {
	key      string
	value    string
	hasValue bool
}

// parseTag splits a `jsonschema` tag into items. See the package
// documentation for the grammar: a value ends at the next comma unless
// single-quoted (a doubled quote stands for one quote), except an
// unquoted description, which may hold commas: it ends at the first comma
// that starts another item (see itemAt), so that nothing after it is
// swallowed into the text.
func parseTag(tag string) ([]tagItem, error) {
	var items []tagItem
	for s := tag; s != ""; {
		s = strings.TrimLeft(s, " ")
		end := strings.IndexAny(s, "=,")
		if end < 0 {
			end = len(s)
		}
		it := tagItem{key: strings.TrimSpace(s[:end])}
		if it.key == "" {
			return nil, errors.New("empty item")
		}
		s = s[end:]
		if strings.HasPrefix(s, "=") {
			s = s[1:]
			it.hasValue = true
			switch {
			case strings.HasPrefix(s, "'"):
				v, rest, err := unquoteTagValue(s)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", it.key, err)
				}
				if rest != "" && rest[0] != ',' {
					return nil, fmt.Errorf("%s: unexpected %q after quoted value", it.key, rest)
				}
				it.value, s = v, rest
			case it.key == "description":
				end := descriptionEnd(s)
				it.value, s = s[:end], s[end:]
			default:
				end := strings.IndexByte(s, ',')
				if end < 0 {
					end = len(s)
				}
				it.value, s = s[:end], s[end:]
			}
		}
		items = append(items, it)
		if s != "" {
			s = s[1:] // the comma
			if strings.TrimSpace(s) == "" {
				return nil, errors.New("trailing comma")
			}
		}
	}
	return items, nil
}

// descriptionEnd returns where an unquoted description value at the start
// of s ends: at the first comma that starts another item (itemAt), or at
// the end of the tag. "Age in years, rounded down" is one description;
// "x,minimum=1" is the description x and a minimum.
func descriptionEnd(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ',' && itemAt(s[i+1:]) {
			return i
		}
	}
	return len(s)
}

// itemAt reports whether s, what follows a comma in a tag, reads as an
// item of the key=value form: after spaces, a word (an ASCII letter, then
// letters, digits or underscores) and "=" (spaces allowed before it), or
// the flag required or optional alone up to the next comma. Whether the
// word is a known key does not matter: an unknown one is then an error
// (a misspelled key after a description must not become part of it).
func itemAt(s string) bool {
	s = strings.TrimLeft(s, " ")
	i := wordLen(s)
	if i == 0 {
		return false
	}
	rest := strings.TrimLeft(s[i:], " ")
	if strings.HasPrefix(rest, "=") {
		return true
	}
	return (s[:i] == "required" || s[:i] == "optional") && (rest == "" || rest[0] == ',')
}

// unquoteTagValue reads a single-quoted value at the start of s, in which
// two consecutive quotes stand for one.
func unquoteTagValue(s string) (value, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], nil
	}
	return "", "", errors.New("unterminated single-quoted value")
}

// tagOverride is the required/optional decision carried by a tag.
type tagOverride int

const (
	noOverride tagOverride = iota
	forceRequired
	forceOptional
)

// applyTag adds the keywords of a `jsonschema` tag to n, checking that each
// one fits n's type. A node without a type (a $ref or {}) accepts any
// keyword. A tag that is not in the key=value form (see isKeyValueTag) is
// n's description; a blank tag adds nothing.
func applyTag(n *node, tag string) (tagOverride, error) {
	if strings.TrimSpace(tag) == "" {
		return noOverride, nil
	}
	if !isKeyValueTag(tag) {
		n.description = tag
		return noOverride, nil
	}
	items, err := parseTag(tag)
	if err != nil {
		return noOverride, err
	}
	override := noOverride
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if seen[it.key] {
			return noOverride, fmt.Errorf("duplicate %q", it.key)
		}
		seen[it.key] = true
		if err := applyItem(n, it, &override); err != nil {
			return noOverride, fmt.Errorf("%s: %w", it.key, err)
		}
	}
	return override, nil
}

func applyItem(n *node, it tagItem, override *tagOverride) error {
	switch it.key {
	case "required", "optional":
		if it.hasValue {
			return errors.New("takes no value")
		}
		if *override != noOverride {
			return errors.New("required and optional are exclusive")
		}
		*override = forceOptional
		if it.key == "required" {
			*override = forceRequired
		}
		return nil
	}
	if !it.hasValue {
		return fmt.Errorf("unknown flag (want %s=value)", it.key)
	}
	v := it.value
	switch it.key {
	case "description":
		n.description = v
	case "title":
		n.title = v
	case "format":
		n.format = v
	case "enum":
		for _, s := range strings.Split(v, "|") {
			ev, err := typedValue(n.typ, s)
			if err != nil {
				return err
			}
			n.enum = append(n.enum, ev)
		}
	case "default":
		dv, err := typedValue(n.typ, v)
		if err != nil {
			return err
		}
		n.dflt = dv
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		if err := wantType(n, "number", "integer"); err != nil {
			return err
		}
		num, err := number(v)
		if err != nil {
			return err
		}
		switch it.key {
		case "minimum":
			n.minimum = num
		case "maximum":
			n.maximum = num
		case "exclusiveMinimum":
			n.exclusiveMinimum = num
		default:
			n.exclusiveMaximum = num
		}
	case "minLength", "maxLength", "pattern":
		if err := wantType(n, "string"); err != nil {
			return err
		}
		if it.key == "pattern" {
			if _, err := regexp.Compile(v); err != nil {
				return err
			}
			n.pattern = v
			return nil
		}
		u, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("want a non-negative integer, got %q", v)
		}
		if it.key == "minLength" {
			n.minLength = &u
		} else {
			n.maxLength = &u
		}
	case "minItems", "maxItems":
		if err := wantType(n, "array"); err != nil {
			return err
		}
		u, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("want a non-negative integer, got %q", v)
		}
		if it.key == "minItems" {
			n.minItems = &u
		} else {
			n.maxItems = &u
		}
	default:
		return errors.New("unknown key")
	}
	return nil
}

func wantType(n *node, types ...string) error {
	if n.typ == "" {
		return nil
	}
	for _, t := range types {
		if n.typ == t {
			return nil
		}
	}
	return fmt.Errorf("does not apply to type %s", n.typ)
}

func number(s string) (jsontext.Value, error) {
	v := jsontext.Value(strings.TrimSpace(s))
	if v.Kind() != '0' || !v.IsValid() {
		return nil, fmt.Errorf("want a JSON number, got %q", s)
	}
	return v, nil
}

// typedValue converts an enum member or default written in a tag into JSON,
// following the schema type typ.
func typedValue(typ, s string) (jsontext.Value, error) {
	switch typ {
	case "string":
		if v := jsontext.Value(s); v.Kind() == '"' && v.IsValid() {
			return v, nil
		}
		return quote(s)
	case "integer", "number":
		v, err := number(s)
		if err != nil {
			return nil, err
		}
		if typ == "integer" {
			if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
				if _, err := strconv.ParseUint(string(v), 10, 64); err != nil {
					return nil, fmt.Errorf("want an integer, got %q", s)
				}
			}
		}
		return v, nil
	case "boolean":
		switch t := strings.TrimSpace(s); t {
		case "true", "false":
			return jsontext.Value(t), nil
		}
		return nil, fmt.Errorf("want true or false, got %q", s)
	}
	v := jsontext.Value(strings.TrimSpace(s))
	if v.IsValid() && len(v) > 0 {
		return v, nil
	}
	return quote(s)
}

func quote(s string) (jsontext.Value, error) {
	b, err := jsontext.AppendQuote(nil, s)
	return jsontext.Value(b), err
}
