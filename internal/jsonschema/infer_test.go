package jsonschema

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type (
	Color      string
	customJSON struct {
		x int //lint:ignore U1000 the type only needs a field; its methods define its JSON
	}
	Base struct {
		ID   string `json:"id"`
		Note string `json:"note,omitzero"`
	}
	Meta struct {
		Version int `json:"version"`
	}
	Embeds struct {
		Base
		*Meta
		Name string `json:"name"`
	}
	Shadow struct {
		Base
		ID int `json:"id"` // shallower: wins over Base.ID
	}
	ConflictA struct {
		X int
	}
	ConflictB struct {
		X int
	}
	Conflict struct { // both X at the same depth, neither tagged: dropped
		ConflictA
		ConflictB
		Y int `json:"y"`
	}
	Extra struct {
		Name string         `json:"name"`
		Rest map[string]int `json:",embed"`
	}
	Tree struct {
		Value    int     `json:"value"`
		Children []*Tree `json:"children,omitzero"`
	}
	Person struct {
		Name   string  `json:"name"`
		Friend *Person `json:"friend,omitzero"`
		Pet    *Pet    `json:"pet,omitzero"`
	}
	Pet struct {
		Owner *Person `json:"owner,omitzero"`
		Toys  []Toy   `json:"toys"`
	}
	Toy struct {
		Name string `json:"name"`
	}
	List         []List
	GNode[T any] struct {
		V    T         `json:"v"`
		Next *GNode[T] `json:"next,omitzero"`
	}
)

func (customJSON) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }

func TestForKinds(t *testing.T) {
	tests := []struct {
		got  func() (jsontext.Value, error)
		want string
	}{
		{For[bool], `{"type":"boolean"}`},
		{For[int], `{"type":"integer"}`},
		{For[int8], `{"type":"integer"}`},
		{For[int64], `{"type":"integer"}`},
		{For[uint], `{"type":"integer","minimum":0}`},
		{For[uint16], `{"type":"integer","minimum":0}`},
		{For[float32], `{"type":"number"}`},
		{For[float64], `{"type":"number"}`},
		{For[string], `{"type":"string"}`},
		{For[Color], `{"type":"string"}`},
		{For[*string], `{"type":"string"}`},
		{For[**int], `{"type":"integer"}`},
		{For[[]string], `{"type":"array","items":{"type":"string"}}`},
		{For[[][]int], `{"type":"array","items":{"type":"array","items":{"type":"integer"}}}`},
		{For[[3]bool], `{"type":"array","items":{"type":"boolean"},"minItems":3,"maxItems":3}`},
		{For[[]byte], `{"type":"string","contentEncoding":"base64"}`},
		{For[[16]byte], `{"type":"string","contentEncoding":"base64"}`},
		{For[map[string]float64], `{"type":"object","additionalProperties":{"type":"number"}}`},
		{For[map[Color]any], `{"type":"object","additionalProperties":{}}`},
		{For[map[int]string], `{"type":"object","additionalProperties":{"type":"string"},"propertyNames":{"pattern":"^-?[0-9]+$"}}`},
		{For[map[uint8]string], `{"type":"object","additionalProperties":{"type":"string"},"propertyNames":{"pattern":"^[0-9]+$"}}`},
		{For[time.Time], `{"type":"string","format":"date-time"}`},
		{For[*time.Time], `{"type":"string","format":"date-time"}`},
		{For[jsontext.Value], `{}`},
		{For[any], `{}`},
		{For[customJSON], `{}`},
		{For[netip.Addr], `{"type":"string"}`},
		{For[struct{}], `{"type":"object","properties":{},"additionalProperties":false}`},
		{For[struct {
			A string `json:"a"`
			B int    `json:"b,omitzero"`
			C *int   `json:"c"`
			D []int  `json:"d,omitempty"`
			E bool   // no tag: Go name, required
			f int    //nolint:unused // unexported: skipped
			G int    `json:"-"`
			//lint:ignore SA5008 JSON v2 reads "-," as the name "-"
			H int           `json:"-,"` // named "-"
			I int64         `json:"i,string"`
			J []byte        `json:"j,format:base64url"`
			K []byte        `json:"k,format:hex"`
			L []byte        `json:"l,format:array"`
			M time.Time     `json:"m,format:unix"`
			N time.Time     `json:"n,format:DateOnly"`
			O time.Duration `json:"o,format:units"`
			P time.Duration `json:"p,format:nano"`
			Q time.Duration `json:"q,format:iso8601"`
			R string        `json:"'r,s'"`
		}], `{"type":"object","properties":{` +
			`"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"integer"},` +
			`"d":{"type":"array","items":{"type":"integer"}},"E":{"type":"boolean"},"-":{"type":"integer"},` +
			`"i":{"type":"string"},"j":{"type":"string","contentEncoding":"base64url"},` +
			`"k":{"type":"string","contentEncoding":"base16"},` +
			`"l":{"type":"array","items":{"type":"integer","minimum":0}},` +
			`"m":{"type":"number"},"n":{"type":"string"},"o":{"type":"string"},"p":{"type":"number"},` +
			`"q":{"type":"string","format":"duration"},"r,s":{"type":"string"}},` +
			`"required":["a","E","-","i","j","k","l","m","n","o","p","q","r,s"],"additionalProperties":false}`},
	}
	for _, tt := range tests {
		got, err := tt.got()
		if err != nil {
			t.Errorf("For: %v (want %s)", err, tt.want)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("For:\n got %s\nwant %s", got, tt.want)
		}
	}
}

func TestForTags(t *testing.T) {
	type T struct {
		Age    int      `json:"age" jsonschema:"minimum=0,maximum=150,description=Age in years, rounded down"`
		Score  float64  `json:"score" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1.5e2"`
		Name   string   `json:"name" jsonschema:"title=Full name,minLength=1,maxLength=64"`
		Code   string   `json:"code" jsonschema:"pattern='^[A-Z]{2,3}$',format=iso-code"`
		Kind   string   `json:"kind,omitzero" jsonschema:"enum=cat|dog|bird,default=cat"`
		Level  int      `json:"level,omitzero" jsonschema:"enum=1|2|3,default=2"`
		Ratio  float64  `json:"ratio,omitzero" jsonschema:"default=0.5"`
		On     bool     `json:"on,omitzero" jsonschema:"default=true"`
		Tags   []string `json:"tags,omitzero" jsonschema:"minItems=1,maxItems=5,default=[\"a\"]"`
		Any    any      `json:"any,omitzero" jsonschema:"enum=1|x|null,default={\"k\":1}"`
		Quoted string   `json:"quoted,omitzero" jsonschema:"default=\"42\",title='it''s, ok'"`
		Num    string   `json:"num,omitzero" jsonschema:"default=42"`
		Req    string   `json:"req,omitzero" jsonschema:"required"`
		Opt    string   `json:"opt" jsonschema:"optional"`
		PtrReq *int     `json:"ptrReq" jsonschema:"required,description=a pointer, but required"`
		First  int      `json:"first,omitzero" jsonschema:"description=x,minimum=1"`
		Dice   int      `json:"dice,omitzero" jsonschema:"description=How many dice, 1 to 10,minimum=1,maximum=10"`
	}
	got, err := For[T]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"age":{"type":"integer","description":"Age in years, rounded down","minimum":0,"maximum":150},` +
		`"score":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1.5e2},` +
		`"name":{"type":"string","title":"Full name","minLength":1,"maxLength":64},` +
		`"code":{"type":"string","format":"iso-code","pattern":"^[A-Z]{2,3}$"},` +
		`"kind":{"type":"string","enum":["cat","dog","bird"],"default":"cat"},` +
		`"level":{"type":"integer","enum":[1,2,3],"default":2},` +
		`"ratio":{"type":"number","default":0.5},` +
		`"on":{"type":"boolean","default":true},` +
		`"tags":{"type":"array","default":["a"],"items":{"type":"string"},"minItems":1,"maxItems":5},` +
		`"any":{"enum":[1,"x",null],"default":{"k":1}},` +
		`"quoted":{"type":"string","title":"it's, ok","default":"42"},` +
		`"num":{"type":"string","default":"42"},` +
		`"req":{"type":"string"},"opt":{"type":"string"},` +
		`"ptrReq":{"type":"integer","description":"a pointer, but required"},` +
		`"first":{"type":"integer","description":"x","minimum":1},` +
		`"dice":{"type":"integer","description":"How many dice, 1 to 10","minimum":1,"maximum":10}},` +
		`"required":["age","score","name","code","req","ptrReq"],"additionalProperties":false}`
	if string(got) != want {
		t.Errorf("For:\n got %s\nwant %s", got, want)
	}
	if _, err := Compile(got); err != nil {
		t.Errorf("Compile: %v", err)
	}
}

func TestParseTag(t *testing.T) {
	tests := []struct {
		tag  string
		want []tagItem
	}{
		{"required", []tagItem{{key: "required"}}},
		{"minimum=1, maximum=2", []tagItem{{"minimum", "1", true}, {"maximum", "2", true}}},
		{"description=a, b, c", []tagItem{{"description", "a, b, c", true}}},
		{"description=a, b, c=d", []tagItem{{"description", "a, b", true}, {"c", "d", true}}},
		{"description=x,minimum=1", []tagItem{{"description", "x", true}, {"minimum", "1", true}}},
		{"description=x, y , maximum = 2,required", []tagItem{{"description", "x, y ", true}, {"maximum", " 2", true}, {key: "required"}}},
		{"description=first, required", []tagItem{{"description", "first", true}, {key: "required"}}},
		{"description=first, required or not", []tagItem{{"description", "first, required or not", true}}},
		{"description='x,minimum=1',title=t", []tagItem{{"description", "x,minimum=1", true}, {"title", "t", true}}},
		{"description=e.g. a=b", []tagItem{{"description", "e.g. a=b", true}}},
		{"description=x, use a=b", []tagItem{{"description", "x, use a=b", true}}},
		{"description=", []tagItem{{"description", "", true}}},
		{"title=x,description=it's 'quoted', ok", []tagItem{{"title", "x", true}, {"description", "it's 'quoted', ok", true}}},
		{"pattern='a{1,2}',enum='x,y|z'", []tagItem{{"pattern", "a{1,2}", true}, {"enum", "x,y|z", true}}},
		{"title='don''t'", []tagItem{{"title", "don't", true}}},
		{"default=", []tagItem{{"default", "", true}}},
	}
	for _, tt := range tests {
		got, err := parseTag(tt.tag)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseTag(%q) = %+v, %v; want %+v", tt.tag, got, err, tt.want)
		}
	}
	for _, bad := range []string{",", "a,", "a,,b", "title='x", "title='x'y"} {
		if got, err := parseTag(bad); err == nil {
			t.Errorf("parseTag(%q) = %+v, want error", bad, got)
		}
	}
}

func TestIsKeyValueTag(t *testing.T) {
	tests := []struct {
		tag  string
		want bool
	}{
		{"minimum=1", true},
		{"  description=first addend", true},
		{"maximum =2", true},
		{"x_1=2", true},
		{"required", true},
		{" optional , title=t", true},
		{"first addend", false},
		{"the first number, must be positive", false},
		{"a value in [0, 1]; x=1 means all", false},
		{"1=one", false},
		{"_x=1", false},
		{"e.g. a=b", false},
		{"required field", false},
		{"nullable", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isKeyValueTag(tt.tag); got != tt.want {
			t.Errorf("isKeyValueTag(%q) = %v, want %v", tt.tag, got, tt.want)
		}
	}
}

// TestForPlainDescriptionTag checks the tag form go-sdk and mcp-go users
// write: a tag that is not key=value is the field's description, verbatim.
func TestForPlainDescriptionTag(t *testing.T) {
	type In struct {
		A int    `json:"a" jsonschema:"first addend"`
		B int    `json:"b" jsonschema:"the second one, which may be negative; e.g. b=-1"`
		C string `json:"c,omitzero" jsonschema:"description=kept, as before"`
		D string `json:"d,omitzero" jsonschema:""`
		E string `json:"e,omitzero" jsonschema:"nullable"`
	}
	got, err := For[In]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"a":{"type":"integer","description":"first addend"},` +
		`"b":{"type":"integer","description":"the second one, which may be negative; e.g. b=-1"},` +
		`"c":{"type":"string","description":"kept, as before"},` +
		`"d":{"type":"string"},` +
		`"e":{"type":"string","description":"nullable"}},` +
		`"required":["a","b"],"additionalProperties":false}`
	if string(got) != want {
		t.Fatalf("For:\n got %s\nwant %s", got, want)
	}
	s, err := Compile(got)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(jsontext.Value(`{"a":1,"b":2}`)); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if err := s.Validate(jsontext.Value(`{"a":"1","b":2}`)); err == nil {
		t.Error("Validate accepted a string for an integer field")
	}
}

func TestForEmbedded(t *testing.T) {
	tests := []struct {
		got  func() (jsontext.Value, error)
		want string
	}{
		// Promoted fields are flattened in field order; those promoted
		// through a pointer are optional.
		{For[Embeds], `{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"},"version":{"type":"integer"},"name":{"type":"string"}},"required":["id","name"],"additionalProperties":false}`},
		{For[Shadow], `{"type":"object","properties":{"note":{"type":"string"},"id":{"type":"integer"}},"required":["id"],"additionalProperties":false}`},
		{For[Conflict], `{"type":"object","properties":{"y":{"type":"integer"}},"required":["y"],"additionalProperties":false}`},
		{For[Extra], `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":{"type":"integer"}}`},
		{For[struct {
			Name string         `json:"name"`
			Rest jsontext.Value `json:",embed"`
		}], `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`},
		{For[struct {
			Base `json:"base"` // named: a regular field
		}], `{"type":"object","properties":{"base":{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id"],"additionalProperties":false}},"required":["base"],"additionalProperties":false}`},
	}
	for _, tt := range tests {
		got, err := tt.got()
		if err != nil {
			t.Errorf("For: %v (want %s)", err, tt.want)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("For:\n got %s\nwant %s", got, tt.want)
		}
	}
}

func TestForRecursion(t *testing.T) {
	tests := []struct {
		got  func() (jsontext.Value, error)
		want string
	}{
		{For[Tree], `{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["value"],"additionalProperties":false}`},
		{For[[]Tree], `{"type":"array","items":{"$ref":"#/$defs/Tree"},"$defs":{"Tree":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/Tree"}}},"required":["value"],"additionalProperties":false}}}`},
		{For[Person], `{"type":"object","properties":{"name":{"type":"string"},"friend":{"$ref":"#"},"pet":{"type":"object","properties":{"owner":{"$ref":"#"},"toys":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}}},"required":["toys"],"additionalProperties":false}},"required":["name"],"additionalProperties":false}`},
		{For[struct {
			A *Pet `json:"a,omitzero" jsonschema:"description=first"`
			B *Pet `json:"b,omitzero"`
		}], `{"type":"object","properties":{"a":{"$ref":"#/$defs/Pet","description":"first"},"b":{"$ref":"#/$defs/Pet"}},"additionalProperties":false,"$defs":{"Person":{"type":"object","properties":{"name":{"type":"string"},"friend":{"$ref":"#/$defs/Person"},"pet":{"$ref":"#/$defs/Pet"}},"required":["name"],"additionalProperties":false},"Pet":{"type":"object","properties":{"owner":{"$ref":"#/$defs/Person"},"toys":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}}},"required":["toys"],"additionalProperties":false}}}`},
		{For[List], `{"type":"array","items":{"$ref":"#"}}`},
		{For[struct {
			I GNode[int]    `json:"i"`
			S GNode[string] `json:"s"`
		}], `{"type":"object","properties":{"i":{"$ref":"#/$defs/GNode_int_"},"s":{"$ref":"#/$defs/GNode_string_"}},"required":["i","s"],"additionalProperties":false,"$defs":{` +
			`"GNode_int_":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/GNode_int_"}},"required":["v"],"additionalProperties":false},` +
			`"GNode_string_":{"type":"object","properties":{"v":{"type":"string"},"next":{"$ref":"#/$defs/GNode_string_"}},"required":["v"],"additionalProperties":false}}}`},
	}
	for _, tt := range tests {
		got, err := tt.got()
		if err != nil {
			t.Errorf("For: %v (want %s)", err, tt.want)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("For:\n got %s\nwant %s", got, tt.want)
		}
		if _, err := Compile(got); err != nil {
			t.Errorf("Compile(%s): %v", got, err)
		}
	}
}

func TestForErrors(t *testing.T) {
	tests := []struct {
		got  func() (jsontext.Value, error)
		want string
	}{
		{For[chan int], "unsupported type chan int"},
		{For[func()], "unsupported type func()"},
		{For[complex128], "unsupported type complex128"},
		{For[map[[2]int]string], "unsupported map key type [2]int"},
		{For[struct{ D time.Duration }], "time.Duration has no default JSON representation"},
		{For[struct{ F chan int }], "field F: unsupported type chan int"},
		{For[struct{ S struct{ G []chan int } }], "field S.G[]: unsupported type chan int"},
		{For[struct{ x, y int }], "has no exported fields"},
		{func() (jsontext.Value, error) {
			return ForType(reflect.StructOf([]reflect.StructField{
				{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"a"`},
				{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"a"`},
			}))
		}, `fields A and B conflict over JSON name "a"`},
		{For[struct {
			A int `json:"a" jsonschema:"minLength=1"`
		}], "minLength: does not apply to type integer"},
		{For[struct {
			A string `json:"a" jsonschema:"minimum=1"`
		}], "minimum: does not apply to type string"},
		{For[struct {
			A []int `json:"a" jsonschema:"pattern=x"`
		}], "pattern: does not apply to type array"},
		{For[struct {
			A string `json:"a" jsonschema:"maxItems=1"`
		}], "maxItems: does not apply to type string"},
		{For[struct {
			A int `json:"a" jsonschema:"minimum=one"`
		}], `minimum: want a JSON number, got "one"`},
		{For[struct {
			A string `json:"a" jsonschema:"minLength=-1"`
		}], "minLength: want a non-negative integer"},
		{For[struct {
			A string `json:"a" jsonschema:"pattern=("`
		}], "pattern: error parsing regexp"},
		{For[struct {
			A int `json:"a" jsonschema:"enum=1|x"`
		}], `enum: want a JSON number, got "x"`},
		{For[struct {
			A int `json:"a" jsonschema:"default=1.5"`
		}], `default: want an integer, got "1.5"`},
		{For[struct {
			A bool `json:"a" jsonschema:"default=yes"`
		}], `default: want true or false, got "yes"`},
		{For[struct {
			A int `json:"a" jsonschema:"minimun=1"`
		}], "minimun: unknown key"},
		{For[struct {
			A int `json:"a" jsonschema:"required,nullable"`
		}], "nullable: unknown flag"},
		// A misspelled key after a description is an error, never part of
		// the description.
		{For[struct {
			A int `json:"a" jsonschema:"description=x,minimun=1"`
		}], `field A: jsonschema tag "description=x,minimun=1": minimun: unknown key`},
		{For[struct {
			A int `json:"a" jsonschema:"description=x, c=d"`
		}], `c: unknown key`},
		{For[struct {
			A int `json:"a" jsonschema:"description=x,description=y"`
		}], `duplicate "description"`},
		{For[struct {
			A int `json:"a" jsonschema:"description='x"`
		}], "unterminated"},
		{For[struct {
			A int `json:"a" jsonschema:"Minimum=1"`
		}], `field A: jsonschema tag "Minimum=1": Minimum: unknown key`},
		{For[struct {
			A int `json:"a" jsonschema:"maximum = x"`
		}], `maximum: want a JSON number, got " x"`},
		{For[struct {
			A int `json:"a" jsonschema:"title=a,title=b"`
		}], `duplicate "title"`},
		{For[struct {
			A int `json:"a" jsonschema:"required,optional"`
		}], "required and optional are exclusive"},
		{For[struct {
			A int `json:"a" jsonschema:"required=true"`
		}], "takes no value"},
		{For[struct {
			A int `json:"a" jsonschema:"title='x"`
		}], "unterminated"},
		{For[struct {
			Base `jsonschema:"description=x"`
		}], "cannot have a jsonschema tag"},
		{For[struct {
			Color
		}], "embedded field Color of non-struct type must have a JSON name"},
	}
	for _, tt := range tests {
		got, err := tt.got()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("For = %s, %v; want error containing %q", got, err, tt.want)
		}
	}
	if _, err := ForType(nil); err == nil {
		t.Error("ForType(nil) succeeded")
	}
}

func TestForReturnsCopy(t *testing.T) {
	a, _ := For[Base]()
	a[0] = 'X'
	b, _ := For[Base]()
	if b[0] != '{' {
		t.Errorf("cached schema was modified through a returned copy: %s", b)
	}
}

// TestInferredSchemasValidateOwnValues marshals Go values with
// go-json-experiment and validates them against the inferred schema.
func TestInferredSchemasValidateOwnValues(t *testing.T) {
	type Args struct {
		Embeds
		Age      int               `json:"age" jsonschema:"minimum=0,maximum=150"`
		Kind     string            `json:"kind,omitzero" jsonschema:"enum=cat|dog"`
		When     time.Time         `json:"when"`
		Until    *time.Time        `json:"until,omitzero"`
		Data     []byte            `json:"data"`
		Scores   map[string]uint8  `json:"scores"`
		ByID     map[int]string    `json:"byId,omitzero"`
		Pair     [2]float64        `json:"pair"`
		Tree     Tree              `json:"tree"`
		Raw      jsontext.Value    `json:"raw,omitzero"`
		Anything any               `json:"anything"`
		Nil      []string          `json:"nil"`
		Labels   map[Color][]Color `json:"labels,omitzero"`
		Addr     netip.Addr        `json:"addr"`
		Count    int64             `json:"count,string"`
		Wait     time.Duration     `json:"wait,format:units"`
	}
	values := []any{
		Args{},
		Args{
			Embeds:   Embeds{Base: Base{ID: "x", Note: "n"}, Meta: &Meta{Version: 2}, Name: "n"},
			Age:      150,
			Kind:     "dog",
			When:     time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC),
			Until:    new(time.Now()),
			Data:     []byte("hello"),
			Scores:   map[string]uint8{"a": 255},
			ByID:     map[int]string{-1: "neg", 2: "two"},
			Pair:     [2]float64{1.5, -2},
			Tree:     Tree{Value: 1, Children: []*Tree{{Value: 2}, {Value: 3, Children: []*Tree{{Value: 4}}}}},
			Raw:      jsontext.Value(`{"free":["form"]}`),
			Anything: []any{1, "two", nil},
			Labels:   map[Color][]Color{"sky": {"blue"}},
			Addr:     netip.MustParseAddr("192.0.2.1"),
			Count:    1 << 60,
			Wait:     90 * time.Second,
		},
	}
	schema, err := For[Args]()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(schema)
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	for _, v := range values {
		b, err := json.Marshal(v, json.ExperimentalSupportFormatTag(true))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(b); err != nil {
			t.Errorf("Validate(%s) = %v", b, err)
		}
	}
	// And the schema still rejects what the type cannot produce.
	for in, want := range map[string]string{
		`{"age":-1}`:       "/age: must be >= 0",
		`{"kind":"cow"}`:   `/kind: must be one of "cat", "dog"`,
		`{"unknown":true}`: `unexpected property "unknown"`,
		`{"tree":{"value":1,"children":[{"value":"x"}]}}`: "/tree/children/0/value: must be integer, got string",
		`{"byId":{"x":"y"}}`:                              `/byId: invalid property name "x": must match pattern "^-?[0-9]+$"`,
	} {
		b, _ := json.Marshal(values[1], json.ExperimentalSupportFormatTag(true))
		merged := mergeObjects(t, b, in)
		err := s.Validate(merged)
		if err == nil || err.Error() != want {
			t.Errorf("Validate(%s) = %v, want %q", in, err, want)
		}
	}
}

// mergeObjects overlays the members of patch on the JSON object base.
func mergeObjects(t *testing.T, base []byte, patch string) jsontext.Value {
	t.Helper()
	var m, p map[string]jsontext.Value
	if err := json.Unmarshal(base, &m); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(patch), &p); err != nil {
		t.Fatal(err)
	}
	for k, v := range p {
		m[k] = v
	}
	b, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func BenchmarkForCached(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := For[Embeds](); err != nil {
			b.Fatal(err)
		}
	}
}
