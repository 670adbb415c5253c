package streamhttp

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// earlyServer serves one subscribable resource, file:///r.
func earlyServer() *server.Server {
	s := server.New(nil)
	s.AddResource(&mcp.Resource{URI: "file:///r", Name: "r"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	return s
}

// A notification sent after initialize but before the client opened its
// GET stream is held and written first on that stream (issue 33: a
// subscriber's first update was lost). ResourceUpdated writes to an HTTP
// session before it returns (WriteNeverWaits), so the update is sent
// before the GET here.
func TestHTTPEarlyNotificationHeldForGET(t *testing.T) {
	e := newHTTPEnv(t, earlyServer(), nil)
	sid := e.Initialize("{}")
	e.Subscribe(sid, "file:///r")
	e.srv.ResourceUpdated("file:///r")
	e.srv.ResourceUpdated("file:///r")
	get := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
	defer get.Close()
	stream := get.Prime(0)
	for want := uint64(1); want <= 2; want++ {
		f := get.MessageFrame(t, mcp.NotificationResourcesUpdated)
		if st, seq := httpenv.SplitEventID(t, f.ID); st != stream || seq != want {
			t.Errorf("held update has event id %q, want %s_%d", f.ID, stream, want)
		}
	}
	// Later ones follow on the same stream, numbered after them.
	e.srv.ResourceUpdated("file:///r")
	f := get.MessageFrame(t, mcp.NotificationResourcesUpdated)
	if _, seq := httpenv.SplitEventID(t, f.ID); seq != 3 {
		t.Errorf("live update has event id %q, want sequence 3", f.ID)
	}
	if n := len(e.session(sid).heldEarly()); n != 0 {
		t.Errorf("%d messages still held after the GET stream opened", n)
	}
}

// EarlyMessages bounds what is held; negative holds nothing; once a GET
// stream has been opened nothing more is held.
func TestHTTPEarlyMessagesBound(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  *Options
		sends int
		want  int
	}{
		{"default", nil, DefaultEarlyMessages + 5, DefaultEarlyMessages},
		{"two", &Options{EarlyMessages: 2}, 5, 2},
		{"none", &Options{EarlyMessages: -1}, 3, 0},
		{"NoStandaloneStream", &Options{NoStandaloneStream: true}, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newHTTPEnv(t, earlyServer(), tc.opts)
			sid := e.Initialize("{}")
			e.Subscribe(sid, "file:///r")
			for range tc.sends {
				e.srv.ResourceUpdated("file:///r")
			}
			if n := len(e.session(sid).heldEarly()); n != tc.want {
				t.Errorf("%d messages held, want %d", n, tc.want)
			}
		})
	}
	t.Run("after GET", func(t *testing.T) {
		e := newHTTPEnv(t, earlyServer(), nil)
		sid := e.Initialize("{}")
		e.Subscribe(sid, "file:///r")
		get := e.OpenSSE(e.Do(http.MethodGet, sid, ""))
		get.Prime(0)
		hs := e.session(sid)
		hs.dropStandalone(hs.standalone().born + 1) // as when another instance took it
		get.Close()
		e.srv.ResourceUpdated("file:///r")
		if n := len(hs.heldEarly()); n != 0 {
			t.Errorf("%d messages held after a GET stream was opened", n)
		}
	})
}

// heldEarly returns the messages held for the first GET stream.
func (hs *httpSession) heldEarly() [][]byte {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.early
}
