package tasks

import (
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// WithRelated returns params (a JSON object, or nil) with
// _meta["io.modelcontextprotocol/related-task"] naming the task id;
// params that are not an object are returned as they are.
func WithRelated(params jsontext.Value, id string) jsontext.Value {
	p := map[string]jsontext.Value{}
	if params != nil {
		if json.Unmarshal(params, &p) != nil {
			return params
		}
	}
	meta := map[string]jsontext.Value{}
	if m, ok := p["_meta"]; ok {
		_ = json.Unmarshal(m, &meta)
	}
	rt, _ := json.Marshal(mcp.RelatedTaskMetadata{TaskID: id})
	meta[mcp.MetaKeyRelatedTask] = rt
	p["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}

// WithRelatedMeta tags the params of a progress or log notification
// with the related-task _meta key; other params are returned as they
// are. The caller's Meta is copied, not changed.
func WithRelatedMeta(params any, id string) any {
	tag := func(m mcp.Meta) mcp.Meta {
		out := make(mcp.Meta, len(m)+1)
		for k, v := range m {
			out[k] = v
		}
		out[mcp.MetaKeyRelatedTask] = mcp.RelatedTaskMetadata{TaskID: id}
		return out
	}
	switch p := params.(type) {
	case mcp.ProgressParams:
		p.Meta = tag(p.Meta)
		return p
	case mcp.LoggingMessageParams:
		p.Meta = tag(p.Meta)
		return p
	}
	return params
}

// ProgressText is a progress step as a status message: its message,
// then "(progress/total)" or "(progress)".
func ProgressText(p mcp.ProgressParams) string {
	n := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total != nil {
		n += "/" + strconv.FormatFloat(*p.Total, 'f', -1, 64)
	}
	if p.Message == "" {
		return fmt.Sprintf("progress %s", n)
	}
	return fmt.Sprintf("%s (%s)", p.Message, n)
}
