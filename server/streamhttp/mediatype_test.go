package streamhttp

import (
	"mime"
	"testing"
)

// TestMediaType: the shortcut gives what mime.ParseMediaType gives.
func TestMediaType(t *testing.T) {
	for _, s := range []string{
		"application/json", "text/event-stream", "*/*", "application/*", "text/*", "application/vnd.api+json",
		"Application/JSON", "application/json; charset=utf-8", "application/json ;q=0.9", "", "/", "a/", "/b",
		"application", "a/b/c", "application/json\x00", "text/event-stream;q=1", "x_y/z", "é/b",
	} {
		want := ""
		if mt, _, err := mime.ParseMediaType(s); err == nil {
			want = mt
		}
		if got := mediaType(s); got != want {
			t.Errorf("mediaType(%q) = %q, mime says %q", s, got, want)
		}
	}
}
