package client

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestElicitAnswerShape: the client never sends an elicitation answer a
// server must refuse: an unknown action is the handler's error, and
// content goes only with an accepted form.
func TestElicitAnswerShape(t *testing.T) {
	form := &mcp.ElicitParams{Message: "?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","default":30}}}`)}
	url := &mcp.ElicitParams{Mode: mcp.ElicitModeURL, Message: "?", URL: "https://example.com"}
	content := map[string]any{"name": "Ada"}
	for _, tc := range []struct {
		name     string
		p        *mcp.ElicitParams
		res      mcp.ElicitResult
		defaults bool
		err      string
		content  int // members of the content sent; -1: none
	}{
		{"unknown action", form, mcp.ElicitResult{Action: "yolo"}, false, `action "yolo"`, 0},
		{"empty action", form, mcp.ElicitResult{}, false, `action ""`, 0},
		{"accepted form", form, mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: content}, false, "", 1},
		{"accepted form with defaults", form, mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: content}, true, "", 2},
		{"decline drops content", form, mcp.ElicitResult{Action: mcp.ElicitActionDecline, Content: content}, true, "", -1},
		{"cancel drops content", form, mcp.ElicitResult{Action: mcp.ElicitActionCancel, Content: content}, false, "", -1},
		{"URL mode drops content", url, mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: content}, true, "", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handed := tc.res
			c := &Client{opts: Options{ElicitationDefaults: tc.defaults}}
			c.hs.Store(&inputHandlers{elicit: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &handed, nil
			}}) // as Connect stores Options' handlers
			res, err := c.elicit(context.Background(), tc.p)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.content < 0 && res.Content != nil || tc.content >= 0 && len(res.Content) != tc.content {
				t.Errorf("content sent %v", res.Content)
			}
			if handed.Content == nil && tc.res.Content != nil {
				t.Error("the handler's own result was modified")
			}
		})
	}
}
