package server

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// NewLogHandler returns a slog.Handler that sends each record to the
// client as notifications/message with req (Request.Log), so that a
// handler logs with the standard library:
//
//	log := slog.New(server.NewLogHandler(req, "weather"))
//	log.Info("fetching", "city", in.City)
//
// A record goes out when the server declared logging (Options.Logging)
// and its level is at least the client's: on a legacy session the level
// it set with logging/setLevel (info before that); on a 2026-07-28
// request the envelope's io.modelcontextprotocol/logLevel (none: nothing
// is sent). Levels map as debug (below info), info, notice (between info
// and warn), warning, error, critical (error+4), alert (error+8) and
// emergency (error+12 and above). The data is a JSON object: the message
// as "msg", then the attributes, groups as nested objects. logger names
// the logger ("" for none). Like req, the handler is valid while the
// handler of req runs; records after that are dropped.
func NewLogHandler(req *Request, logger string) slog.Handler {
	h := &logHandler{req: req, logger: logger, enc: &logEncoder{}}
	h.enc.json = slog.NewJSONHandler(&h.enc.buf, &slog.HandlerOptions{
		Level: slog.Level(-1 << 20), // the client's level decides (Enabled)
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
				return slog.Attr{}
			}
			return a
		},
	})
	return h
}

type logHandler struct {
	req    *Request
	logger string
	enc    *logEncoder
	json   slog.Handler // enc.json with this handler's attrs and groups (nil: enc.json)
}

// logEncoder turns records into JSON, one at a time: the buffer is
// shared by the handlers derived with WithAttrs and WithGroup.
type logEncoder struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	json slog.Handler
}

func (h *logHandler) inner() slog.Handler {
	if h.json != nil {
		return h.json
	}
	return h.enc.json
}

// Enabled reports whether a record of level would reach the client.
func (h *logHandler) Enabled(_ context.Context, level slog.Level) bool {
	r := h.req
	if !r.srv.opts.Logging {
		return false
	}
	threshold, ok := r.era().logThreshold(r)
	return ok && mcpLevel(level).AtLeast(threshold)
}

// Handle sends the record. The encoding is done under the encoder's
// lock; the notification is sent after it.
func (h *logHandler) Handle(ctx context.Context, rec slog.Record) error {
	if !h.Enabled(ctx, rec.Level) {
		return nil
	}
	h.enc.mu.Lock()
	h.enc.buf.Reset()
	err := h.inner().Handle(ctx, rec)
	data := jsontext.Value(bytes.TrimSpace(slices.Clone(h.enc.buf.Bytes())))
	h.enc.mu.Unlock()
	if err != nil {
		return err
	}
	return h.req.Log(ctx, mcpLevel(rec.Level), h.logger, data)
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.enc.mu.Lock()
	defer h.enc.mu.Unlock()
	return &logHandler{req: h.req, logger: h.logger, enc: h.enc, json: h.inner().WithAttrs(attrs)}
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	h.enc.mu.Lock()
	defer h.enc.mu.Unlock()
	return &logHandler{req: h.req, logger: h.logger, enc: h.enc, json: h.inner().WithGroup(name)}
}

// mcpLevel maps a slog level to the MCP logging level (RFC 5424 names).
func mcpLevel(l slog.Level) mcp.LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return mcp.LevelDebug
	case l < slog.LevelInfo+2:
		return mcp.LevelInfo
	case l < slog.LevelWarn:
		return mcp.LevelNotice
	case l < slog.LevelError:
		return mcp.LevelWarning
	case l < slog.LevelError+4:
		return mcp.LevelError
	case l < slog.LevelError+8:
		return mcp.LevelCritical
	case l < slog.LevelError+12:
		return mcp.LevelAlert
	}
	return mcp.LevelEmergency
}
