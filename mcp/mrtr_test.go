package mcp

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestInputRequiredResult(t *testing.T) {
	elicit, err := NewInputRequest(MethodElicitationCreate, &ElicitParams{Message: "name?", RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := NewInputRequest(MethodRootsList, nil)
	r := InputRequiredResult{
		ResultType:    ResultInputRequired,
		InputRequests: InputRequests{"login": elicit, "roots": roots},
		RequestState:  "opaque",
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if rt, err := peekResultType(raw); err != nil || rt != ResultInputRequired || rt.IsComplete() {
		t.Errorf("resultType = %q, %v", rt, err)
	}
	var back InputRequiredResult
	roundTrip(t, raw, &back)
	var p ElicitParams
	if err := back.InputRequests["login"].DecodeParams(&p); err != nil || p.Message != "name?" {
		t.Errorf("params = %+v, %v", p, err)
	}
	if back.InputRequests["roots"].Params != nil {
		t.Error("roots/list gained params")
	}

	var responses InputResponses
	if err := responses.Set("login", ElicitResult{Action: ElicitActionAccept, Content: map[string]any{"name": "octocat"}}); err != nil {
		t.Fatal(err)
	}
	var er ElicitResult
	if ok, err := responses.Decode("login", &er); !ok || err != nil || er.Action != ElicitActionAccept {
		t.Errorf("decode = %v %v %+v", ok, err, er)
	}
	if ok, _ := responses.Decode("missing", &er); ok {
		t.Error("missing key found")
	}

	for _, bad := range []InputRequiredResult{
		{ResultType: ResultComplete, RequestState: "s"},
		{ResultType: ResultInputRequired},
		{ResultType: ResultInputRequired, InputRequests: InputRequests{"x": {Method: MethodToolsCall}}},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	if rt, _ := peekResultType([]byte(`{"content":[]}`)); !rt.IsComplete() {
		t.Error("absent resultType is not complete")
	}
}

// peekResultType returns the resultType member of a raw result, as the
// client reads it.
func peekResultType(raw jsontext.Value) (ResultType, error) {
	var w struct {
		ResultType ResultType `json:"resultType"`
	}
	err := json.Unmarshal(raw, &w)
	return w.ResultType, err
}
