package server

import (
	"github.com/mcpkit/mcpkit/mcp"
)

// Require returns nil when the client declared every capability in need
// (for this request, on the 2026-07-28 wire; at initialize, on a legacy
// session), and otherwise the error the handler should return: on 2026
// requests -32021 MissingRequiredClientCapability with
// data.requiredCapabilities naming what is missing (SEP-2575; HTTP 400),
// on legacy requests -32603 naming it (-32021 does not exist there).
// Checked: elicitation (form and url), sampling (and sampling.tools,
// sampling.context), roots.
func (r *Request) Require(need mcp.ClientCapabilities) error {
	have := r.clientCaps()
	var missing mcp.ClientCapabilities
	short := false
	if e := need.Elicitation; e != nil {
		form := e.Form != nil || e.URL == nil
		noForm := form && !have.Elicitation.SupportsForm()
		noURL := e.URL != nil && !have.Elicitation.SupportsURL()
		if noForm || noURL {
			m := *e // name only the missing modes
			if !noForm {
				m.Form = nil
			}
			if !noURL {
				m.URL = nil
			}
			missing.Elicitation, short = &m, true
		}
	}
	if sc := need.Sampling; sc != nil {
		hs := have.Sampling
		if hs == nil {
			missing.Sampling, short = sc, true
		} else if (sc.Tools != nil && hs.Tools == nil) || (sc.Context != nil && hs.Context == nil) {
			m := mcp.SamplingCapability{} // only the missing sub-capabilities
			if hs.Tools == nil {
				m.Tools = sc.Tools
			}
			if hs.Context == nil {
				m.Context = sc.Context
			}
			missing.Sampling, short = &m, true
		}
	}
	if need.Roots != nil && have.Roots == nil {
		missing.Roots, short = &mcp.RootsCapability{}, true
	}
	if !short {
		return nil
	}
	return r.era().missingCapability(missing)
}
