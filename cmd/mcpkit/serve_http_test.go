package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// TestServeHTTPServerTimeouts: slow headers and idle connections are
// bounded; nothing bounds a whole request or answer (event streams last).
func TestServeHTTPServerTimeouts(t *testing.T) {
	srv := newHTTPServer(nil)
	if srv.ReadHeaderTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("ReadHeaderTimeout %v, IdleTimeout %v: both must be set", srv.ReadHeaderTimeout, srv.IdleTimeout)
	}
	if srv.ReadTimeout != 0 || srv.WriteTimeout != 0 {
		t.Errorf("ReadTimeout %v, WriteTimeout %v: they would cut event streams", srv.ReadTimeout, srv.WriteTimeout)
	}
}

func TestServeAccessLines(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	all := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	if got := accessLines(loop, nil, nil); got != nil {
		t.Errorf("loopback with defaults: %q, want nothing", got)
	}
	for _, tc := range []struct {
		addr           net.Addr
		hosts, origins []string
		want           []string
	}{
		{all, nil, nil, []string{"Host accepted: any", "browser requests are refused", "--allow-host", "--allow-origin"}},
		{all, []string{"mcp.example.com"}, nil, []string{"Host accepted: mcp.example.com", "Host's own origin"}},
		{all, nil, []string{"https://app.example.com"}, []string{"Host accepted: any", "Origin accepted: https://app.example.com"}},
		{loop, nil, []string{"https://app.example.com"}, []string{"Host accepted: loopback names", "Origin accepted: https://app.example.com"}},
	} {
		text := strings.Join(accessLines(tc.addr, tc.hosts, tc.origins), "\n")
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%v %q %q: %q lacks %q", tc.addr, tc.hosts, tc.origins, text, w)
			}
		}
	}
}

// TestServeAllowFlags: serve on every interface prints what it accepts,
// with the flags' values (commas and repetition both work).
func TestServeAllowFlags(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve starts, prints, and stops at once
	var out bytes.Buffer
	err := runServe(ctx, []string{"--http", "0.0.0.0:0", "--allow-host", "a.example.com,b.example.com", "--allow-host", "c.example.com", "--allow-origin", "https://app.example.com"}, &out)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, out.String())
	}
	for _, w := range []string{"Host accepted: a.example.com, b.example.com, c.example.com", "Origin accepted: https://app.example.com"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	if err := runServe(context.Background(), []string{"--stdio", "--allow-host", "x"}, &out); exitCode(err) != exitUsage {
		t.Errorf("--allow-host with --stdio: %v, want a usage error", err)
	}
}

func TestDemoAuthAddr(t *testing.T) {
	for _, c := range []struct {
		ip string
		ok bool
	}{{"127.0.0.1", true}, {"::1", true}, {"0.0.0.0", true}, {"::", true}, {"192.0.2.7", false}, {"2001:db8::1", false}} {
		err := demoAuthAddr(&net.TCPAddr{IP: net.ParseIP(c.ip), Port: 8080})
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.ip, err, c.ok)
		}
	}
}
