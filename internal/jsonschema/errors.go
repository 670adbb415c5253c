package jsonschema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxListed bounds the failures an error message names beside the first,
// so that an instance failing everywhere (a long array of bad items) does
// not make a message of unbounded size; the rest are counted.
const maxListed = 15

// ValidationError is an instance that does not conform to its schema. Its
// Error method returns one line naming every failure (up to 1+maxListed,
// then a count), the first being the JSON pointer of the first failing
// value (omitted for the instance itself) and a short message, e.g.
// `missing required property "b"; /age: must be >= 0`.
type ValidationError struct {
	Location string   // JSON pointer of the failing value; "" is the whole instance
	Message  string   // what is wrong there, e.g. "must be >= 0"
	More     int      // number of other failures found
	Others   []string // the first of those (at most maxListed), each "pointer: message"
	err      *jsv.ValidationError
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.Location != "" {
		b.WriteString(e.Location)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	b.WriteString(e.OthersText())
	return b.String()
}

// OthersText returns the failures after the first as Error writes them:
// "; /b: must be string; /c: …", then " (and N more)" for those beyond
// Others; "" when there is only one.
func (e *ValidationError) OthersText() string {
	var b strings.Builder
	for _, o := range e.Others {
		b.WriteString("; ")
		b.WriteString(o)
	}
	if rest := e.More - len(e.Others); rest > 0 {
		fmt.Fprintf(&b, " (and %d more)", rest)
	}
	return b.String()
}

// Detail returns the validator's complete, multi-line report.
func (e *ValidationError) Detail() string { return e.err.Error() }

// Unwrap returns the validator's own error.
func (e *ValidationError) Unwrap() error { return e.err }

var printer = message.NewPrinter(language.English)

// newValidationError summarizes the validator's error tree; instance is the
// decoded instance (nil when unknown).
func newValidationError(root *jsv.ValidationError, instance any) *ValidationError {
	repairLocations(root, instance)
	leaves := collectLeaves(root, nil)
	slices.SortStableFunc(leaves, func(x, y leaf) int {
		return cmp.Or(comparePointers(x.loc, y.loc), strings.Compare(x.msg, y.msg))
	})
	first := leaves[0]
	e := &ValidationError{Location: pointer(first.loc), Message: first.msg, More: len(leaves) - 1, err: root}
	for _, l := range leaves[1:min(len(leaves), 1+maxListed)] {
		if loc := pointer(l.loc); loc != "" {
			e.Others = append(e.Others, loc+": "+l.msg)
		} else {
			e.Others = append(e.Others, l.msg)
		}
	}
	return e
}

// repairLocations fixes the location of propertyNames failures, which the
// validator (v6.0.3) records with a slice that later siblings overwrite:
// the length is right but the tokens may not be. It keeps the recorded
// location when it leads to an object with the offending name, and
// otherwise searches the instance for one at the same depth.
func repairLocations(e *jsv.ValidationError, instance any) {
	if k, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		if loc, ok := findObjectWith(instance, e.InstanceLocation, 0, k.Property); ok {
			e.InstanceLocation = loc
		}
	}
	for _, c := range e.Causes {
		repairLocations(c, instance)
	}
}

// findObjectWith returns the path of an object len(hint)-depth levels below
// v that has the member name, preferring the tokens of hint.
func findObjectWith(v any, hint []string, depth int, name string) ([]string, bool) {
	if depth == len(hint) {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		_, ok = m[name]
		return slices.Clone(hint), ok
	}
	try := func(tok string, child any) ([]string, bool) {
		loc, ok := findObjectWith(child, hint, depth+1, name)
		if ok {
			loc[depth] = tok
		}
		return loc, ok
	}
	switch v := v.(type) {
	case map[string]any:
		if child, ok := v[hint[depth]]; ok {
			if loc, ok := try(hint[depth], child); ok {
				return loc, true
			}
		}
		keys := slices.Sorted(maps.Keys(v))
		for _, k := range keys {
			if loc, ok := try(k, v[k]); ok {
				return loc, true
			}
		}
	case []any:
		for i, child := range v {
			if loc, ok := try(strconv.Itoa(i), child); ok {
				return loc, true
			}
		}
	}
	return nil, false
}

// leaf is one reportable failure.
type leaf struct {
	loc []string
	msg string
}

// collectLeaves flattens the error tree into reportable failures. For a
// failed anyOf/oneOf it drops the alternatives that clearly do not apply
// (wrong type, or a wrong const/enum discriminator such as "type":"image"
// for a text block) and descends into the one that remains; when none or
// several remain, the anyOf/oneOf itself is reported.
func collectLeaves(e *jsv.ValidationError, out []leaf) []leaf {
	switch k := e.ErrorKind.(type) {
	case *kind.PropertyNames:
		// The causes are located at the name, which is no instance location.
		msg := describe(k)
		if len(e.Causes) > 0 {
			if inner := collectLeaves(e.Causes[0], nil); len(inner) > 0 {
				msg += ": " + inner[0].msg
			}
		}
		return append(out, leaf{e.InstanceLocation, msg})
	case *kind.AnyOf, *kind.OneOf:
		if o, ok := k.(*kind.OneOf); ok && len(o.Subschemas) > 0 {
			break // several matched: a leaf
		}
		var viable []*jsv.ValidationError
		for _, c := range e.Causes {
			if !discriminatorMiss(c, len(e.InstanceLocation)) {
				viable = append(viable, c)
			}
		}
		if len(viable) == 1 {
			return collectLeaves(viable[0], out)
		}
		if len(viable) == 0 {
			if l, ok := discriminatorLeaf(e); ok {
				return append(out, l)
			}
		}
		return append(out, leaf{e.InstanceLocation, describe(e.ErrorKind)})
	}
	if len(e.Causes) == 0 {
		msg := describe(e.ErrorKind)
		if _, ok := e.ErrorKind.(*kind.FalseSchema); ok {
			switch {
			case strings.HasSuffix(e.SchemaURL, "Properties"): // additional or unevaluated
				msg = "unexpected property"
			case strings.HasSuffix(e.SchemaURL, "Items"):
				msg = "unexpected item"
			}
		}
		return append(out, leaf{e.InstanceLocation, msg})
	}
	for _, c := range e.Causes {
		out = collectLeaves(c, out)
	}
	return out
}

// discriminatorMiss reports whether a failed alternative has a failure
// showing it does not apply: a type mismatch at the alternatives' own
// location (depth tokens deep) or a const/enum mismatch there or one
// property below.
func discriminatorMiss(e *jsv.ValidationError, depth int) bool {
	for _, c := range e.Causes {
		if discriminatorMiss(c, depth) {
			return true
		}
	}
	switch e.ErrorKind.(type) {
	case *kind.Type:
		return len(e.InstanceLocation) == depth
	case *kind.Const, *kind.Enum:
		return len(e.InstanceLocation) <= depth+1
	}
	return false
}

// discriminatorLeaf merges alternatives that all failed on a const of the
// same property into one "must be one of" failure.
func discriminatorLeaf(e *jsv.ValidationError) (leaf, bool) {
	var loc []string
	var want []string
	for _, c := range e.Causes {
		k, l, ok := findConst(c, len(e.InstanceLocation)+1)
		if !ok || loc != nil && !slices.Equal(loc, l) {
			return leaf{}, false
		}
		loc = l
		if w := display(k.Want); !slices.Contains(want, w) {
			want = append(want, w)
		}
	}
	if loc == nil {
		return leaf{}, false
	}
	return leaf{loc, "must be one of " + strings.Join(want, ", ")}, true
}

func findConst(e *jsv.ValidationError, depth int) (*kind.Const, []string, bool) {
	if k, ok := e.ErrorKind.(*kind.Const); ok && len(e.InstanceLocation) == depth {
		return k, e.InstanceLocation, true
	}
	for _, c := range e.Causes {
		if k, l, ok := findConst(c, depth); ok {
			return k, l, true
		}
	}
	return nil, nil, false
}

// describe turns an error kind into a short message.
func describe(k jsv.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("must be %s, got %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Required:
		return "missing required " + plural("property", "properties", k.Missing)
	case *kind.AdditionalProperties:
		// The validator lists them in map order: sort for a stable message.
		return "unexpected " + plural("property", "properties", slices.Sorted(slices.Values(k.Properties)))
	case *kind.DependentRequired:
		return fmt.Sprintf("property %q requires %s", k.Prop, plural("property", "properties", k.Missing))
	case *kind.Dependency:
		return fmt.Sprintf("property %q requires %s", k.Prop, plural("property", "properties", k.Missing))
	case *kind.PropertyNames:
		return fmt.Sprintf("invalid property name %q", k.Property)
	case *kind.Minimum:
		return "must be >= " + rat(k.Want)
	case *kind.Maximum:
		return "must be <= " + rat(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be > " + rat(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be < " + rat(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + rat(k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d characters long", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long", k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items", k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %d properties", k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d properties", k.Want)
	case *kind.Pattern:
		return fmt.Sprintf("must match pattern %q", k.Want)
	case *kind.Const:
		return "must be " + display(k.Want)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = display(w)
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.UniqueItems:
		return fmt.Sprintf("must not contain duplicates (items %d and %d are equal)", k.Duplicates[0], k.Duplicates[1])
	case *kind.FalseSchema:
		return "is not allowed"
	case *kind.Not:
		return "must not match the schema in \"not\""
	case *kind.AnyOf:
		return "must match at least one schema in \"anyOf\""
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return fmt.Sprintf("must match exactly one schema in \"oneOf\" (matches %d and %d)", k.Subschemas[0], k.Subschemas[1])
		}
		return "must match exactly one schema in \"oneOf\""
	}
	return strings.ReplaceAll(k.LocalizedString(printer), "\n", " ")
}

func plural(one, many string, names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(names) == 1 {
		return one + " " + q[0]
	}
	return many + " " + strings.Join(q, ", ")
}

func rat(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// display renders a JSON value compactly for a message.
func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}

// pointer renders instance location tokens as a JSON pointer.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// comparePointers orders locations token by token, array indexes
// numerically, a parent before its children.
func comparePointers(x, y []string) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		xi, errx := strconv.Atoi(x[i])
		yi, erry := strconv.Atoi(y[i])
		if c := cmp.Compare(x[i], y[i]); c != 0 {
			if errx == nil && erry == nil {
				return cmp.Compare(xi, yi)
			}
			return c
		}
	}
	return cmp.Compare(len(x), len(y))
}
