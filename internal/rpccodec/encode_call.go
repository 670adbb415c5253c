package rpccodec

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// AppendPlainCall appends the everyday tools/call params, a name and
// arguments and nothing else, exactly as the reflective encoder writes
// them (with this package's options or json's defaults, which agree on
// them), without reflection: the client's hottest request. ok is false,
// with b's new bytes to be discarded, for any other params: those with a
// _meta, a task, input responses or a request state, arguments with
// whitespace or an escape (which the encoder may write differently) or
// that are not valid JSON, a name that is not valid UTF-8. Callers then
// use the encoder, so output and errors stay its own
// (TestAppendPlainCall holds the two to the same bytes).
func AppendPlainCall(b []byte, p *mcp.CallToolParams) (_ []byte, ok bool) {
	if p.Meta != nil || p.Task != nil || len(p.InputResponses) > 0 || p.RequestState != "" {
		return b, false
	}
	b = append(b, `{"name":`...)
	b, err := jsontext.AppendQuote(b, p.Name)
	if err != nil {
		return b, false
	}
	if p.Arguments != nil {
		if len(p.Arguments) == 0 || bytes.ContainsAny(p.Arguments, " \t\r\n\\") || !isValid(p.Arguments) {
			return b, false
		}
		b = append(b, `,"arguments":`...)
		b = append(b, p.Arguments...)
	}
	return append(b, '}'), true
}
