package seam

import (
	"strings"
	"testing"
)

// fakeServer stands for *server.Server, which this package cannot name.
type fakeServer struct{ p Protocol }

// TestInstallOf: Of hands its argument to the function Install was given
// and returns what that returns; Of with a type Install was not given
// panics, naming both types.
func TestInstallOf(t *testing.T) {
	saved := opener
	t.Cleanup(func() { opener = saved })
	var got *fakeServer
	Install(func(s *fakeServer) Protocol { got = s; return s.p })

	srv := &fakeServer{}
	if p := Of(srv); p != nil || got != srv {
		t.Fatalf("Of(srv) = %v, the installed function saw %p; want nil and %p", p, got, srv)
	}

	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "Of(string)") || !strings.Contains(msg, "*seam.fakeServer") {
			t.Fatalf("Of with another type: recovered %q, want a panic naming string and *seam.fakeServer", msg)
		}
	}()
	Of("not a server")
	t.Fatal("Of with another type returned")
}
