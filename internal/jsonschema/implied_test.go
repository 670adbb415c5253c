package jsonschema

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type impliedInner struct {
	N  int8    `json:"n"`
	U  uint16  `json:"u"`
	F  float64 `json:"f,omitempty"`
	S  string  `json:"s" jsonschema:"a description only"`
	OK bool    `json:"ok,omitzero"`
}

type impliedTree struct {
	Name     string         `json:"name"`
	Children []impliedTree  `json:"children"`
	Attrs    map[string]int `json:"attrs,omitempty"`
}

type impliedEmbedded struct {
	impliedInner
	Extra []string `json:"extra"`
}

type impliedAll struct {
	Text   string                   `json:"text"`
	Ints   []int64                  `json:"ints"`
	Fixed  [2]uint8                 `json:"fixed"`
	Blob   []byte                   `json:"blob"`
	When   time.Time                `json:"when"`
	Any    any                      `json:"any"`
	Raw    jsontext.Value           `json:"raw,omitzero"`
	ByInt  map[int]string           `json:"byInt"`
	Nested impliedInner             `json:"nested"`
	List   []impliedInner           `json:"list"`
	Opt    *impliedInner            `json:"opt,omitzero"`
	Tree   impliedTree              `json:"tree"`
	Emb    impliedEmbedded          `json:"emb"`
	Quoted int                      `json:"quoted,string"`
	Deep   map[string][]impliedTree `json:"deep"`
}

// TestImplied: for the types Implied accepts, random values marshal to
// instances of their schema; the types it refuses are refused for a
// reason a value could show.
func TestImplied(t *testing.T) {
	exact := []reflect.Type{
		reflect.TypeFor[impliedInner](),
		reflect.TypeFor[impliedTree](),
		reflect.TypeFor[impliedEmbedded](),
		reflect.TypeFor[impliedAll](),
		reflect.TypeFor[map[string]impliedAll](),
		reflect.TypeFor[[]impliedInner](),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range exact {
		ok, err := Implied(typ)
		if err != nil || !ok {
			t.Fatalf("Implied(%v) = %v, %v; want true", typ, ok, err)
		}
		doc, err := ForType(typ)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Compile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			v := reflect.New(typ)
			fill(r, v.Elem(), 0)
			b, err := json.Marshal(v.Interface())
			if err != nil {
				t.Fatalf("%v #%d: marshal: %v", typ, i, err)
			}
			if err := s.Validate(b); err != nil {
				t.Fatalf("%v #%d: %s is not an instance of %s: %v", typ, i, b, doc, err)
			}
		}
	}
	type ptrField struct {
		P *impliedInner `json:"p"`
	}
	type ptrElems struct {
		L []*impliedInner `json:"l"`
	}
	type bounded struct {
		N int `json:"n" jsonschema:"minimum=0"`
	}
	type forced struct {
		S string `json:"s,omitempty" jsonschema:"required"`
	}
	type enum struct {
		K string `json:"k" jsonschema:"enum=a|b"`
	}
	type dur struct {
		D time.Duration `json:"d,format:sec"`
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[*impliedInner](),
		reflect.TypeFor[ptrField](),
		reflect.TypeFor[ptrElems](),
		reflect.TypeFor[map[string]*int](),
		reflect.TypeFor[bounded](),
		reflect.TypeFor[forced](),
		reflect.TypeFor[enum](),
		reflect.TypeFor[dur](),
	} {
		if ok, err := Implied(typ); err != nil || ok {
			t.Errorf("Implied(%v) = %v, %v; want false", typ, ok, err)
		}
	}
	if _, err := Implied(reflect.TypeFor[chan int]()); err == nil {
		t.Error("Implied(chan int): no error")
	}
}

// fill sets v to a random value (empty and nil ones included).
func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(r.Int64N(1<<33), r.Int64N(1e9)).UTC()))
		return
	case reflect.TypeFor[jsontext.Value]():
		if r.IntN(2) == 0 {
			v.SetBytes([]byte(`{"x":[1,"y",null]}`))
		}
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(r.Int64() >> (r.IntN(64)))
		if r.IntN(2) == 0 {
			v.SetInt(-v.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(r.Uint64() >> (r.IntN(64)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat((r.Float64() - 0.5) * float64(r.IntN(1e6)))
	case reflect.String:
		v.SetString([]string{"", "a", "é ü", "\u2028\"\\\n", "long text with spaces"}[r.IntN(5)])
	case reflect.Interface:
		switch r.IntN(3) {
		case 1:
			v.Set(reflect.ValueOf("s"))
		case 2:
			v.Set(reflect.ValueOf(1.5))
		}
	case reflect.Pointer:
		if r.IntN(2) == 0 {
			p := reflect.New(v.Type().Elem())
			fill(r, p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		if r.IntN(4) == 0 {
			return // nil
		}
		n := r.IntN(3)
		if depth > 3 {
			n = 0
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(r, v.Index(i), depth+1)
		}
	case reflect.Map:
		if r.IntN(4) == 0 {
			return // nil
		}
		m := reflect.MakeMap(v.Type())
		for range r.IntN(3) {
			if depth > 3 {
				break
			}
			k := reflect.New(v.Type().Key()).Elem()
			fill(r, k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	}
}
