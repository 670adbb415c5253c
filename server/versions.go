package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// served is the set of protocol revisions one server serves
// (Options.ProtocolVersions), split by era, each newest first. It is
// fixed by New and read without a lock.
type served struct {
	legacy []string // negotiated by initialize
	modern []string // claimed by a 2026 envelope; advertised by server/discover
}

// servedVersions narrows the revisions this package serves to those
// listed (none listed: all of them). A listed revision this package does
// not serve is a configuration error, returned for Server.Err; the
// others are still narrowed to, so that a typo never serves more than
// the operator allowed.
func servedVersions(listed []string) (served, []error) {
	if len(listed) == 0 {
		return served{legacy: legacyVersions, modern: modernVersions}, nil
	}
	var errs []error
	for _, v := range listed {
		if !isLegacyVersion(v) && !slices.Contains(modernVersions, v) {
			errs = append(errs, fmt.Errorf("server: Options.ProtocolVersions: %q is not a protocol revision this server can serve (%s); it is ignored",
				v, strings.Join(mcp.Versions(), ", ")))
		}
	}
	var sv served
	for _, v := range legacyVersions {
		if slices.Contains(listed, v) {
			sv.legacy = append(sv.legacy, v)
		}
	}
	for _, v := range modernVersions {
		if slices.Contains(listed, v) {
			sv.modern = append(sv.modern, v)
		}
	}
	return sv, errs
}

// ProtocolVersions returns the protocol revisions the server serves,
// newest first: Options.ProtocolVersions narrowed to the revisions it
// knows, or every revision it knows when none was given.
func (s *Server) ProtocolVersions() []string {
	return slices.Concat(s.served.modern, s.served.legacy)
}

// servesLegacy reports whether initialize may negotiate revision v.
func (s *Server) servesLegacy(v string) bool { return slices.Contains(s.served.legacy, v) }

// servesModern reports whether a 2026 envelope may claim revision v.
func (s *Server) servesModern(v string) bool { return slices.Contains(s.served.modern, v) }

// advertised is what the refusal of an unserved revision names as
// supported: the modern revisions served, or — on a server that serves
// none — the legacy ones, so that a client learns to fall back to
// initialize instead of reading an empty list.
func (s *Server) advertised() []string {
	if len(s.served.modern) > 0 {
		return s.served.modern
	}
	return s.served.legacy
}

// unsupportedVersion is the refusal of a 2026 request whose revision is
// not served: -32022 with data.supported and data.requested (SEP-2575;
// 400 on Streamable HTTP, modernEra.httpStatus).
func (s *Server) unsupportedVersion(requested string) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version").
		WithData(mcp.UnsupportedProtocolVersionData{Supported: s.advertised(), Requested: requested})
}

// unsupportedInitialize is the refusal of initialize by a server that
// serves no legacy revision at all: there is no version to offer
// instead, so the error names what the server serves (2025-11-25
// lifecycle: -32602 with data.supported and data.requested; 2026-07-28
// versioning: a server that serves only modern revisions should name
// them in any error it returns to initialize, legacy clients' only
// diagnostic).
func (s *Server) unsupportedInitialize(requested string) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeInvalidParams, "Unsupported protocol version: this server does not serve the initialize handshake of revisions before "+mcp.Version20260728).
		WithData(mcp.UnsupportedProtocolVersionData{Supported: s.ProtocolVersions(), Requested: requested})
}
