package jsonschema

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// Limits on the documents Compile accepts and the instances Validate
// accepts. They are far above what tools and the MCP schemas need (the
// largest MCP schema is about 180 KB, 13 levels and 1,300 nodes deep).
const (
	MaxSchemaBytes   = 1 << 20 // size of a schema document, in bytes
	MaxSchemaDepth   = 64      // nesting of objects and arrays in a schema document
	MaxSchemaNodes   = 20000   // objects and arrays in a schema document
	MaxInstanceDepth = 256     // nesting of objects and arrays in a validated instance
)

// baseURL is the location given to every compiled document; references
// that leave it are refused by noLoader.
const baseURL = "mem:///schema.json"

// dialects lists the accepted "$schema" values (http or https, with or
// without an empty fragment).
var dialects = map[string]bool{
	"json-schema.org/draft/2020-12/schema": true,
	"json-schema.org/draft/2019-09/schema": true,
	"json-schema.org/draft-07/schema":      true,
}

// Schema is a compiled JSON Schema. It is safe for concurrent use.
type Schema struct {
	s    *jsv.Schema
	scan *scanSchema // non-nil when one token scan decides valid instances
}

// Scannable reports whether the schema uses only keywords that one token
// scan of an instance decides (types, properties, required,
// additionalProperties true or false, items and their count, string
// lengths, patterns and enums, numeric bounds; annotations). Validate
// then accepts the instances the scan finds valid without building a
// generic value, and runs the full validator for the others, so that
// results and error messages never change.
func (s *Schema) Scannable() bool { return s.scan != nil }

// Compile compiles a schema document. The default dialect is 2020-12;
// "$schema" may declare 2020-12, 2019-09 or draft-07. References must stay
// inside the document: nothing is loaded from the network or files.
// Compiling a document with the same bytes as one compiled before and
// still in use returns the same Schema (shared.go).
func Compile(schema jsontext.Value) (*Schema, error) {
	if s := lookupShared(schema); s != nil {
		return s, nil
	}
	c, err := newCompiler(schema)
	if err != nil {
		return nil, err
	}
	s, err := c.Compile(baseURL)
	if err != nil {
		return nil, compileError(err)
	}
	return storeShared(schema, &Schema{s: s, scan: scannable(c.doc)}), nil
}

// CompileDefinitions compiles a document once and returns a Schema for each
// member of its "$defs" (2019-09 and later) or "definitions" (draft-07)
// object, keyed by name. Subschemas shared between definitions are compiled
// once. The document needs no root schema of its own.
func CompileDefinitions(doc jsontext.Value) (map[string]*Schema, error) {
	c, err := newCompiler(doc)
	if err != nil {
		return nil, err
	}
	root, _ := c.doc.(map[string]any)
	out := map[string]*Schema{}
	for _, kw := range []string{"$defs", "definitions"} {
		defs, _ := root[kw].(map[string]any)
		names := make([]string, 0, len(defs))
		for name := range defs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			s, err := c.Compile(baseURL + "#/" + kw + "/" + escapeToken(name))
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", kw, name, compileError(err))
			}
			out[name] = &Schema{s: s}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("jsonschema: document has no $defs or definitions")
	}
	return out, nil
}

type compiler struct {
	*jsv.Compiler
	doc any
}

// newCompiler checks the limits and the dialect of doc and returns a
// compiler holding it at baseURL.
func newCompiler(schema jsontext.Value) (*compiler, error) {
	if len(schema) > MaxSchemaBytes {
		return nil, fmt.Errorf("jsonschema: schema is %d bytes, more than the limit of %d", len(schema), MaxSchemaBytes)
	}
	doc, err := decode(schema, MaxSchemaDepth, MaxSchemaNodes)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: schema: %w", err)
	}
	switch d := doc.(type) {
	case bool:
	case map[string]any:
		if v, ok := d["$schema"]; ok {
			s, _ := v.(string)
			u := strings.TrimSuffix(s, "#")
			u, ok1 := strings.CutPrefix(u, "https://")
			if !ok1 {
				u, _ = strings.CutPrefix(u, "http://")
			}
			if !dialects[u] {
				return nil, fmt.Errorf("jsonschema: unsupported dialect $schema %v (want JSON Schema 2020-12, 2019-09 or draft-07)", jsontextString(v))
			}
		}
	default:
		return nil, errors.New("jsonschema: schema must be a JSON object or boolean")
	}
	c := jsv.NewCompiler()
	c.DefaultDraft(jsv.Draft2020)
	c.UseLoader(noLoader{})
	for _, name := range assertedFormats {
		c.RegisterFormat(&jsv.Format{Name: name, Validate: func(any) error { return nil }})
	}
	if err := c.AddResource(baseURL, doc); err != nil {
		return nil, fmt.Errorf("jsonschema: %w", err)
	}
	return &compiler{Compiler: c, doc: doc}, nil
}

// assertedFormats are the formats the validator asserts under draft-07;
// they are registered as no-ops so that "format" is an annotation in every
// dialect, as 2020-12 specifies.
var assertedFormats = []string{
	"json-pointer", "relative-json-pointer", "uuid", "duration", "period",
	"ipv4", "ipv6", "hostname", "email", "date", "time", "date-time", "uri",
	"iri", "uri-reference", "iri-reference", "uri-template", "semver",
}

// noLoader refuses to load anything: schemas must be self-contained.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q refused: schemas must be self-contained (no network or file loading)",
		strings.TrimPrefix(url, "mem:///"))
}

// compileError turns a validator compile error into one line.
func compileError(err error) error {
	var ve *jsv.SchemaValidationError
	if errors.As(err, &ve) {
		var verr *jsv.ValidationError
		if errors.As(ve.Err, &verr) {
			return fmt.Errorf("jsonschema: invalid schema: %s", newValidationError(verr, nil).Error())
		}
	}
	var le *jsv.LoadURLError
	if errors.As(err, &le) {
		return fmt.Errorf("jsonschema: %w", le.Err)
	}
	msg := strings.ReplaceAll(err.Error(), baseURL, "")
	return fmt.Errorf("jsonschema: %s", strings.ReplaceAll(msg, "\n", " "))
}

// escapeToken escapes a JSON pointer token for use in a URI fragment.
func escapeToken(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	s = strings.ReplaceAll(s, "/", "~1")
	return strings.ReplaceAll(s, "%", "%25")
}

func jsontextString(v any) string {
	if s, ok := v.(string); ok {
		q, _ := jsontext.AppendQuote(nil, s)
		return string(q)
	}
	return fmt.Sprintf("%v", v)
}

// Validate reports whether instance (JSON text) is valid against s. A
// validation failure is a *ValidationError; malformed JSON or an instance
// over the limits is reported as a plain error.
func (s *Schema) Validate(instance jsontext.Value) error {
	if s.scan != nil && (s.scan.quick(instance) || s.scan.valid(instance)) {
		return nil
	}
	v, err := decodeInstance(instance)
	if err != nil {
		return err
	}
	if err := s.s.Validate(v); err != nil {
		var verr *jsv.ValidationError
		if errors.As(err, &verr) {
			return newValidationError(verr, v)
		}
		return err
	}
	return nil
}
