package client

import (
	"errors"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// peekSeeds are results whose result type the peek and the decoder must
// read alike: plain, escaped in the name or the value, absent, repeated,
// mistyped, nested.
var peekSeeds = []string{
	`{"resultType":"input_required","inputRequests":{}}`,
	`{"result\u0054ype":"input_required"}`,
	`{"\u0072esultType":"task","task":{}}`,
	`{"resultType":"input\u005frequired"}`,
	`{"resultType":"complete","content":[]}`,
	`{"content":[],"structuredContent":{"resultType":"task"}}`,
	`{"resultType":"x","result\u0054ype":"y"}`,
	`{"resultType":null}`,
	`{"resultType":5}`,
	`{"ResultType":"task"}`,
	`{"resultTyp\u0065":"task"}`,
	`{"result\\Type":"task"}`,
	`{}`,
	`[]`,
	`null`,
}

// decodedResultType is what the JSON decoder reads as the result type of
// raw: the decoder every typed result goes through.
func decodedResultType(raw []byte) (mcp.ResultType, error) {
	var r struct {
		ResultType mcp.ResultType `json:"resultType"`
	}
	err := json.Unmarshal(raw, &r)
	return r.ResultType, err
}

// TestPeekResultTypeEscapes: a member name with escapes is the member it
// decodes to, for the peek as for the decoder.
func TestPeekResultTypeEscapes(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want mcp.ResultType
	}{
		{`{"result\u0054ype":"input_required"}`, mcp.ResultInputRequired},
		{`{"content":[],"\u0072esultType":"task"}`, mcp.ResultTask},
		{`{"resultType":"input\u005frequired"}`, mcp.ResultInputRequired},
		{`{"resultTyp\u0065X":"task"}`, ""},
		{`{"result\\Type":"task"}`, ""},
	} {
		got, err := peekResultType(jsontext.Value(tc.raw))
		if err != nil || got != tc.want {
			t.Errorf("peekResultType(%s) = %q, %v; want %q", tc.raw, got, err, tc.want)
		}
	}
	// What that means for a call: an escaped input_required is not
	// taken for a complete result.
	err := complete(mcp.MethodToolsCall, jsontext.Value(`{"result\u0054ype":"input_required","inputRequests":{"a":{"method":"roots/list"}}}`), &mcp.CallToolResult{}, nil, nil)
	var ir *InputRequiredError
	if !errors.As(err, &ir) {
		t.Errorf("complete = %v, want an *InputRequiredError", err)
	}
}

// FuzzPeekResultType holds peekResultType to the JSON decoder: whenever
// the peek answers, the decoder accepts the value and reads the same
// result type.
func FuzzPeekResultType(f *testing.F) {
	for _, s := range peekSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rt, perr := peekResultType(jsontext.Value(raw))
		if !jsontext.Value(raw).IsValid() {
			return // a result is one valid JSON value (jsonrpc checked it); only no panic here
		}
		// The peek may refuse more than the decoder (a null or a
		// non-object fails the call), never answer otherwise.
		drt, derr := decodedResultType(raw)
		if perr == nil && (derr != nil || drt != rt) {
			t.Fatalf("%s: the peek reads %q, the decoder %q (%v)", raw, rt, drt, derr)
		}
	})
}
