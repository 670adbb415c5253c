package ratelimit

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestLimiterDownLogged: the refusal is jsonrpc.ErrUnavailable (the
// carrier's 503), and the details go to Options.Logger; with FailOpen
// the requests are served, and logged all the same.
func TestLimiterDownLogged(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		var log bytes.Buffer
		ic := Interceptor(Options{
			Limiter: downLimiter{}, Session: Every(time.Second, 5), Tool: Every(time.Second, 5),
			FailOpen: failOpen, Logger: slog.New(slog.NewTextHandler(&log, nil)),
		})
		served := 0
		h := ic(func(context.Context, *intercept.Call) (any, error) { served++; return "ok", nil })
		c := intercept.Call{Side: intercept.Server, Inbound: true, Method: mcp.MethodToolsCall, Name: "t", SessionID: "s1"}
		_, err := h(context.Background(), &c)
		if failOpen {
			if err != nil || served != 1 {
				t.Errorf("FailOpen: err %v, served %d; want the request served", err, served)
			}
		} else if !errors.Is(err, jsonrpc.ErrUnavailable) || served != 0 {
			t.Errorf("fail closed: err %v, served %d; want jsonrpc.ErrUnavailable", err, served)
		}
		out := log.String()
		if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "10.0.0.7:6379") || !strings.Contains(out, "bucket=session") {
			t.Errorf("FailOpen %v: the log does not have the failure's details: %s", failOpen, out)
		}
		if failOpen && !strings.Contains(out, "bucket=tool") {
			t.Errorf("FailOpen: the tool bucket was not tried after the session's failed: %s", out)
		}
	}
}
