// Package jsonschema owns everything mcpkit does with JSON Schema: inferring
// a schema from a Go type (for the input and output schemas of typed tools)
// and compiling and validating schemas (for tool arguments, structured
// results and the official MCP wire schemas).
//
// It is a leaf package: it must not import any other mcpkit package. Its
// only dependencies are the standard library, github.com/go-json-experiment/json
// (JSON v2, with [jsontext.Value] for raw JSON) and
// github.com/santhosh-tekuri/jsonschema/v6 (the validator, with its
// golang.org/x/text message printer).
//
// # Inference
//
// [For] and [ForType] turn a Go type into a compact JSON Schema 2020-12
// document. They follow the go-json-experiment marshaling rules, so a value
// of the type marshaled with json.Marshal validates against its own schema:
//
//   - bool → boolean; signed integers → integer; unsigned integers →
//     integer with minimum 0; floats → number; string → string.
//   - structs → {"type":"object","properties":{…},"required":[…],
//     "additionalProperties":false}; "properties" is always present and the
//     properties appear in field order (the order json.Marshal writes them).
//     The JSON name comes from the json tag; `json:"-"` and unexported
//     fields are skipped; embedded structs without a JSON name (or with the
//     `embed` option) are flattened using the JSON v2 dominance rules. An
//     embedded map or jsontext.Value (`json:",embed"`) turns
//     additionalProperties into that value's schema.
//   - A field is required unless it has the omitzero or omitempty option, is
//     a pointer, or was promoted from an embedded pointer to a struct.
//     Pointers otherwise have the schema of their element; they are not
//     made nullable, so a nil pointer field should carry omitzero (otherwise
//     json.Marshal writes null, which the schema rejects).
//   - slices → array with items; arrays → array with items and
//     minItems = maxItems = length; []byte and [N]byte → string with
//     contentEncoding base64 (or the encoding named by the json format
//     option); maps with string keys → object with additionalProperties;
//     maps with integer keys also get a propertyNames pattern.
//   - time.Time → string with format date-time; time.Duration needs a json
//     format option (as for json.Marshal); jsontext.Value, interfaces and
//     types with their own MarshalJSON/MarshalJSONTo → {} (any value); other
//     encoding.TextMarshaler types → string. The json `string` option turns
//     a number into a string, and json `format` options (time, duration and
//     bytes formats, which json.Marshal honors with
//     json.ExperimentalSupportFormatTag) pick the matching schema.
//     Channels, functions and complex numbers are errors, as are the struct
//     shapes json.Marshal rejects (e.g. two fields with the same JSON name).
//
// Recursive types are supported. A type that refers to itself is emitted
// once under "$defs" (named after the Go type, with a numeric suffix on
// collisions) and referenced with "$ref":"#/$defs/Name"; a reference back to
// the root type is "$ref":"#", so the root stays an inline object schema as
// MCP requires for inputSchema. Non-recursive types are always inlined.
// Results are cached per type; each call returns a fresh copy. [Implied]
// reports whether the schema asks nothing a marshaled value of the type
// could fail (no nullable pointer, no tag keyword beyond a description),
// so that a typed tool's results need no check against their own
// inferred output schema.
//
// # Struct tags
//
// The `jsonschema` struct tag takes one of two forms. The plain form, the
// one go-sdk and mcp-go users write, is the field's description, verbatim:
//
//	A int `json:"a" jsonschema:"first addend"`
//
// The key=value form adds keywords to a field's schema. It is a
// comma-separated list of key=value items and bare flags:
//
//	Age  int      `json:"age" jsonschema:"minimum=0,maximum=150,description=Age in years, as an integer"`
//	Kind string   `json:"kind,omitzero" jsonschema:"enum=cat|dog|bird,default=cat"`
//	Code string   `json:"code" jsonschema:"pattern='^[A-Z]{2,3}$',title=ISO code"`
//
// The two forms are told apart by the start of the tag. A tag is in the
// key=value form when, after leading spaces, it starts with a word (an
// ASCII letter followed by letters, digits or underscores) and then "="
// (spaces may come before the "="), or when its first comma-separated
// item, spaces trimmed, is exactly required or optional. Any other tag is
// a plain description: "first addend", "the first number, must be
// positive", "e.g. a=b". A tag that is empty or only spaces adds nothing.
// So a misspelled key ("minimun=1", "Minimum=1") is an error rather than
// a description, and a description that must start with "word=" is
// written description=… .
//
// Keys: description, title, enum (values separated by |), minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, format,
// minItems, maxItems, default, and the flags required and optional (which
// override the json-derived rule). Grammar rules:
//
//   - A value ends at the next comma, unless it is enclosed in single
//     quotes; inside quotes a comma is literal and a doubled single quote
//     stands for one quote.
//   - An unquoted description may hold commas: it ends at the first comma
//     that starts another item, that is a comma followed (spaces allowed)
//     by a word and "=", or by required or optional alone up to the next
//     comma. So "description=Age in years, rounded down" is one
//     description, "description=x,minimum=1" is the description x and a
//     minimum of 1, and "description=x,minimun=1" is an error (unknown
//     key), never the description "x,minimun=1". A description whose text
//     has a comma followed by word= is written quoted:
//     description='set a, b=c'.
//   - enum values and default follow the field's type: for a string field
//     they are taken verbatim (a default that is a quoted JSON string is
//     unquoted); for number, integer and boolean fields they must parse as
//     that JSON type; otherwise they are parsed as JSON when they parse and
//     taken as strings when they do not.
//   - Unknown keys, duplicated keys, malformed numbers, invalid patterns and
//     keywords that do not apply to the field's type (e.g. minLength on an
//     int) are errors: a typo in a tag must not silently weaken a schema.
//     The error names the Go field and the tag, e.g. `jsonschema: type
//     main.AddIn: field B: jsonschema tag "minimum=x": minimum: want a JSON
//     number, got "x"` (nested fields are named A.B, elements A[]).
//
// # Validation
//
// [Compile] turns a schema into a [Schema] once (at tool registration);
// [Schema.Validate] is the hot path. A schema that uses only types,
// properties, required, additionalProperties true or false, items with
// minItems/maxItems, minLength/maxLength, pattern, string enums and numeric
// bounds, besides annotations ([Schema.Scannable]: what inference gives
// for structs of scalars, nested structs and slices, and what most
// hand-written tool schemas use) is checked by one allocation-free token
// scan; only an instance the scan cannot prove valid goes through the full
// validator, which also writes the error, so results never differ (a fuzz
// test holds the scan to the validator). The default dialect is 2020-12 when
// "$schema" is absent; "$schema" may also declare 2019-09 or draft-07; any
// other dialect is an error. Formats and content keywords are annotations
// only (never asserted), whatever the dialect. Nothing is ever loaded from
// the network or the file system: every external "$ref" (and unknown
// "$schema" meta-schema) is refused at compile time; references inside the
// document ("#/$defs/…", "$anchor", "$id"-relative within the document)
// work. [CompileDefinitions] compiles a document once and returns one
// Schema per entry of "$defs" or "definitions" (used for the MCP schemas).
//
// Limits (SEP-2106 asks implementations to bound this work):
//
//   - a schema document may be at most [MaxSchemaBytes] bytes, nest at
//     most [MaxSchemaDepth] objects/arrays deep and contain at most
//     [MaxSchemaNodes] objects and arrays;
//   - an instance may nest at most [MaxInstanceDepth] levels and must be
//     valid UTF-8 JSON without duplicate object names.
//
// A failed validation returns a *[ValidationError] whose Error() is one short
// line naming the failing instance location as a JSON pointer, e.g.
// "/age: must be >= 0", suitable for a tool result text; when several values
// fail, the first by location is named and the others are counted. An
// instance that is not valid JSON, or exceeds the limits, yields a plain
// error starting with "invalid instance:". A compiled Schema is safe for
// concurrent use.
package jsonschema
