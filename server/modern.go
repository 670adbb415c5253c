package server

import (
	"context"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// legacyVersions are the revisions this package serves through
// initialize (Options.ProtocolVersions narrows them per server).
var legacyVersions = mcp.LegacyVersions()

func isLegacyVersion(v string) bool { return slices.Contains(legacyVersions, v) }

// modernVersions are the 2026-era revisions this package serves, newest
// first; Options.ProtocolVersions narrows them per server (versions.go),
// and what a server serves is what server/discover and -32022 advertise.
var modernVersions = []string{mcp.Version20260728}

// quotedModern is the newest modern revision as a JSON string.
const quotedModern = `"` + mcp.Version20260728 + `"`

// envelope is the per-request metadata of the modern era (SEP-2575),
// lifted from params._meta.
type envelope struct {
	version  string
	caps     *mcp.ClientCapabilities // shared, read-only (envcache.go)
	info     *mcp.Implementation     // shared, read-only (envcache.go)
	logLevel mcp.LoggingLevel        // "" means no log notifications (2026 logging)
	name     string                  // params.name (tools/call, prompts/get), for Mcp-Name
	uri      string                  // params.uri (resources/read), for Mcp-Name
	taskID   string                  // params.taskId (tasks/*), for Mcp-Name

	// The envelope's members as they arrived in _meta (nil: absent; a
	// JSON null is kept), set by the params decoder (parseMeta).
	rawVersion, rawCaps, rawInfo, rawLevel jsontext.Value
}

// envelopeMember is where the params decoder keeps the _meta member name
// when it belongs to the envelope, making *env on the first; nil for any
// other member.
func envelopeMember(env **envelope, name string) *jsontext.Value {
	switch name {
	case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo, mcp.MetaKeyLogLevel:
	default:
		return nil
	}
	if *env == nil {
		*env = new(envelope)
	}
	e := *env
	switch name {
	case mcp.MetaKeyProtocolVersion:
		return &e.rawVersion
	case mcp.MetaKeyClientCapabilities:
		return &e.rawCaps
	case mcp.MetaKeyClientInfo:
		return &e.rawInfo
	}
	return &e.rawLevel
}

// liftEnvelope reads the modern claim of a request from its params,
// already decoded (decodeWire): the envelope's values are decoded here,
// once, from the raw members of _meta. claimed is false when _meta has
// no protocolVersion claim: legacy traffic. A claim whose envelope is
// malformed is an error (-32602), never a fallback to legacy; a claim of
// a revision this server does not serve (Options.ProtocolVersions) is
// -32022 (SEP-2575; a
// modern-style claim naming a legacy revision gets -32022 too), with
// env.version still set for the header check.
func liftEnvelope(s *Server, wp *wireParams) (env *envelope, claimed bool, err *jsonrpc.Error) {
	env = wp.env
	if env == nil || env.rawVersion == nil {
		return nil, false, nil
	}
	pv := env.rawVersion
	env.name, env.uri, env.taskID = wp.Name, wp.URI, wp.TaskID
	if string(pv) == quotedModern { // the common case, without decoding
		env.version = mcp.Version20260728
	} else if pv.Kind() != '"' || json.Unmarshal(pv, &env.version) != nil {
		return nil, true, invalidEnvelope("io.modelcontextprotocol/protocolVersion must be a string")
	}
	caps := env.rawCaps
	if caps == nil {
		return nil, true, invalidEnvelope("_meta needs io.modelcontextprotocol/clientCapabilities")
	}
	var derr error
	if caps.Kind() != '{' {
		return nil, true, invalidEnvelope("io.modelcontextprotocol/clientCapabilities must be a ClientCapabilities object")
	}
	if env.caps, derr = capsCache.decode(caps); derr != nil {
		return nil, true, invalidEnvelope("io.modelcontextprotocol/clientCapabilities must be a ClientCapabilities object")
	}
	if info := env.rawInfo; info != nil && info.Kind() != 'n' {
		if info.Kind() != '{' {
			return nil, true, invalidEnvelope("io.modelcontextprotocol/clientInfo must be an Implementation object")
		}
		if env.info, derr = infoCache.decode(info); derr != nil {
			return nil, true, invalidEnvelope("io.modelcontextprotocol/clientInfo must be an Implementation object")
		}
	}
	if level := env.rawLevel; level != nil {
		if json.Unmarshal(level, &env.logLevel) != nil || !env.logLevel.Valid() {
			return nil, true, invalidEnvelope("io.modelcontextprotocol/logLevel must be a logging level")
		}
	}
	if !s.servesModern(env.version) {
		return env, true, s.unsupportedVersion(env.version)
	}
	return env, true, nil
}

func invalidEnvelope(why string) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: "+why)
}

// serveModern answers one modern request: stateless, with the envelope's
// version and capabilities, no session. out carries the request's own
// notifications (progress, logs, listen notifications).
// header is the HTTP request's header (nil on stdio), for the
// Mcp-Param-* checks of tools/call.
func (s *Server) serveModern(ctx context.Context, env *envelope, msg *jsonrpc.Message, wp *wireParams, out outbound, header map[string][]string) (any, error) {
	in := s.newInbound(wp, msg.Params, serveModernCall)
	in.Request = Request{srv: s, id: msg.ID, version: env.version, caps: env.caps, info: env.info, out: cancelGuard{ctx, out}, eraID: idModern, logLevel: env.logLevel, header: header}
	req := &in.Request
	defer req.end()
	return s.handle(ctx, in, msg.Method)
}

// serveModernCall serves a modern request at the end of the interceptors.
func serveModernCall(ctx context.Context, s *Server, in *inbound, method string) (any, error) {
	req := &in.Request
	var (
		result any
		err    error
	)
	switch method {
	case mcp.MethodServerDiscover:
		result = s.discover()
	case mcp.MethodSubscriptionsListen:
		result, err = s.listen(ctx, req, in.wp)
	default:
		result, err = s.dispatch(ctx, req, method, in.wp)
	}
	if err != nil {
		return nil, err
	}
	return req.era().stamp(s, result, req.isRetry()), nil
}

// cancelGuard sends nothing more for a request once it is cancelled
// (2026-07-28: the server MUST NOT send further messages for a cancelled
// request), whatever context the handler passes along. The listen
// notifications of a cancelled subscription stop the same way.
type cancelGuard struct {
	ctx context.Context // the request's
	out outbound
}

func (g cancelGuard) Call(ctx context.Context, related mcp.ID, method string, params, result any) error {
	if g.ctx.Err() != nil {
		return context.Cause(g.ctx)
	}
	return g.out.Call(ctx, related, method, params, result)
}

func (g cancelGuard) Notify(ctx context.Context, related mcp.ID, method string, params any) error {
	if g.ctx.Err() != nil {
		return context.Cause(g.ctx)
	}
	return g.out.Notify(ctx, related, method, params)
}

// discover answers server/discover (2026-07-28: servers MUST implement it).
func (s *Server) discover() *mcp.DiscoverResult {
	ttl := s.opts.CacheTTL.Milliseconds()
	return &mcp.DiscoverResult{
		SupportedVersions: s.served.modern,
		Capabilities:      s.modernCapabilities(),
		Instructions:      s.opts.Instructions,
		TTLMs:             &ttl,
		CacheScope:        s.cacheScope(),
	}
}

func (s *Server) cacheScope() mcp.CacheScope {
	if s.opts.Visibility != nil {
		return mcp.CachePrivate // what a caller sees depends on the caller
	}
	if s.opts.CacheScope != "" {
		return s.opts.CacheScope
	}
	return mcp.CachePrivate
}

// withServerInfo returns meta with the server's identity added
// (SEP-2575: serverInfo travels in result _meta).
func (s *Server) withServerInfo(meta mcp.Meta) mcp.Meta {
	if len(meta) == 0 {
		return s.serverInfoMeta // shared and never written to: results only encode it
	}
	if _, ok := meta[mcp.MetaKeyServerInfo]; ok {
		return meta
	}
	out := make(mcp.Meta, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out[mcp.MetaKeyServerInfo] = s.serverInfoJSON
	return out
}

// CacheHints returns the cache hints the server gives its cacheable
// 2026-07-28 results when their handler sets none: the time to live in
// milliseconds (Options.CacheTTL) and the scope (Options.CacheScope,
// "private" by default and always with a Visibility filter). Extensions
// with cacheable results (ext/skills) stamp them alike.
func (s *Server) CacheHints() (ttlMs int64, scope mcp.CacheScope) {
	return s.opts.CacheTTL.Milliseconds(), s.cacheScope()
}
