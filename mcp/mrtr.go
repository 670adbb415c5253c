package mcp

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// InputRequest is a server-to-client request embedded in an
// InputRequiredResult (2026 MRTR, SEP-2322): elicitation/create,
// sampling/createMessage or roots/list, with raw params and no id.
type InputRequest struct {
	Method string         `json:"method"`
	Params jsontext.Value `json:"params,omitzero"`
}

// NewInputRequest builds an InputRequest, marshaling params (such as
// *ElicitParams or *CreateMessageParams); nil params are left out.
func NewInputRequest(method string, params any) (InputRequest, error) {
	r := InputRequest{Method: method}
	if params == nil {
		return r, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return InputRequest{}, err
	}
	r.Params = raw
	return r, nil
}

// DecodeParams decodes Params into v; absent params leave v unchanged.
func (r InputRequest) DecodeParams(v any) error {
	if r.Params == nil {
		return nil
	}
	return json.Unmarshal(r.Params, v)
}

// InputRequests maps server-chosen keys to embedded requests.
type InputRequests map[string]InputRequest

// InputResponses maps the keys of InputRequests to the client's raw answers:
// an ElicitResult, CreateMessageResult or ListRootsResult, without resultType.
type InputResponses map[string]jsontext.Value

// Decode decodes the answer at key into v and reports whether it is present.
func (rs InputResponses) Decode(key string, v any) (bool, error) {
	raw, ok := rs[key]
	if !ok {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

// Set marshals v as the answer at key, allocating the map if needed.
func (rs *InputResponses) Set(key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if *rs == nil {
		*rs = make(InputResponses)
	}
	(*rs)[key] = raw
	return nil
}

// InputRequiredResult asks the client to answer InputRequests and retry the
// request with InputResponses and RequestState (2026 MRTR). Only tools/call,
// prompts/get and resources/read may return it.
type InputRequiredResult struct {
	// ResultType is ResultInputRequired.
	ResultType    ResultType    `json:"resultType"`
	InputRequests InputRequests `json:"inputRequests,omitempty"`
	// RequestState is opaque to the client, which echoes it verbatim.
	RequestState string `json:"requestState,omitzero"`
	Meta         Meta   `json:"_meta,omitzero"`
}

// Validate checks that r has the input_required result type, at least one of
// InputRequests and RequestState, and only embeddable request methods.
func (r *InputRequiredResult) Validate() error {
	if r.ResultType != ResultInputRequired {
		return fmt.Errorf("mcp: InputRequiredResult with resultType %q", r.ResultType)
	}
	if len(r.InputRequests) == 0 && r.RequestState == "" {
		return errors.New("mcp: InputRequiredResult needs inputRequests or requestState")
	}
	for key, req := range r.InputRequests {
		if !isInputRequestMethod(req.Method) {
			return fmt.Errorf("mcp: input request %q has method %q", key, req.Method)
		}
	}
	return nil
}
