package mcp

import (
	"errors"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// slowDecodeContent is DecodeContent without its fast paths (plainText,
// leadingContent): the probe of "type", then the block's own decoder.
func slowDecodeContent(raw jsontext.Value) (Content, error) {
	var probe struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, err
	}
	if probe.Type == nil {
		return nil, errors.New("no type")
	}
	c, err := newContent(*probe.Type)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	return c, nil
}

// TestDecodeContentFastPaths holds DecodeContent's fast paths to the
// answer of the full decode, block by block: the same value, or an error
// for both.
func TestDecodeContentFastPaths(t *testing.T) {
	for _, raw := range []string{
		`{"type":"text","text":"hello"}`,
		`{"type":"text","text":""}`,
		`{"type":"text","text":"héllo ☃"}`,
		`{"type":"text","text":"a\"b"}`,
		`{"type":"text","text":"a\\b"}`,
		`{"type":"text","text":"\u0041"}`,
		"{\"type\":\"text\",\"text\":\"a\x01b\"}",
		"{\"type\":\"text\",\"text\":\"a\xffb\"}",
		`{"type":"text","text":"x","type":"text"}`,
		`{"type":"text","text":"x","type":"image"}`,
		`{"type":"text","text":"x","annotations":{"priority":0.5}}`,
		`{"type":"text","text":"x","_meta":{"k":1}}`,
		`{"type":"text","text":"a"b"}`,
		`{"type":"text","text":"x"}}`,
		`{"type":"text" ,"text":"x"}`,
		`{"type":"image","data":"aGk=","mimeType":"image/png"}`,
		`{"type":"image","data":"aGk=","mimeType":"image/png","type":"text"}`,
		`{"type":"resource_link","uri":"file:///a","name":"a"}`,
		`{"type":"audio","data":"aGk=","mimeType":"audio/wav"}`,
		`{"type":"resource","resource":{"uri":"file:///a","text":"t"}}`,
		`{"type":"nope","text":"x"}`,
		`{"type":"te\u0078t","text":"x"}`,
		`{"text":"x","type":"text"}`,
		`{"type":"text"}`,
		`{"type":"text","text":1}`,
	} {
		got, gerr := DecodeContent(jsontext.Value(raw))
		want, werr := slowDecodeContent(jsontext.Value(raw))
		if (gerr == nil) != (werr == nil) {
			t.Errorf("%s: error %v, the full decode's %v", raw, gerr, werr)
			continue
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v, the full decode's %#v", raw, got, want)
		}
	}
}
