package server

import (
	"log/slog"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

func TestMCPLevel(t *testing.T) {
	for _, tc := range []struct {
		in   slog.Level
		want mcp.LoggingLevel
	}{
		{slog.LevelDebug, mcp.LevelDebug}, {slog.LevelInfo - 1, mcp.LevelDebug},
		{slog.LevelInfo, mcp.LevelInfo}, {slog.LevelInfo + 2, mcp.LevelNotice},
		{slog.LevelWarn, mcp.LevelWarning}, {slog.LevelError, mcp.LevelError},
		{slog.LevelError + 4, mcp.LevelCritical}, {slog.LevelError + 8, mcp.LevelAlert},
		{slog.LevelError + 12, mcp.LevelEmergency}, {slog.LevelError + 100, mcp.LevelEmergency},
	} {
		if got := mcpLevel(tc.in); got != tc.want {
			t.Errorf("mcpLevel(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestLogHandlerModernNoLevel: a 2026-07-28 request without a logLevel
// gets no log notifications, and the handler says so (Enabled).
func TestLogHandlerModernNoLevel(t *testing.T) {
	s := New(&Options{Logging: true})
	req := &Request{srv: s, eraID: idModern}
	h := NewLogHandler(req, "x")
	if h.Enabled(t.Context(), slog.LevelError+12) {
		t.Error("enabled without a logLevel in the envelope")
	}
	req.logLevel = mcp.LevelWarning
	if h.Enabled(t.Context(), slog.LevelInfo) || !h.Enabled(t.Context(), slog.LevelWarn) {
		t.Error("the envelope's warning level is not applied")
	}
	if NewLogHandler(&Request{srv: New(nil), eraID: idModern, logLevel: mcp.LevelDebug}, "").Enabled(t.Context(), slog.LevelError) {
		t.Error("enabled on a server without Options.Logging")
	}
}
