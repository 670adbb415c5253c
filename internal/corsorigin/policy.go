package corsorigin

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/mcpheader"
)

// PolicyOptions describes a CORS policy; NewPolicy prepares it once.
type PolicyOptions struct {
	Origins []string // the allow-list (Parse)
	// Methods are the methods the endpoint serves; OPTIONS is added.
	Methods []string
	// Headers are the request headers allowed, lower-case or not; names
	// that are not tokens are dropped, duplicates kept once.
	Headers []string
	// HeaderPrefix, when set (lower case), also allows every header whose
	// name starts with it and is longer: a preflight's answer lists the
	// ones it asked for (SEP-2243's Mcp-Param-{Name}).
	HeaderPrefix string
	// Expose is the Access-Control-Expose-Headers value of allowed
	// answers that are not preflights.
	Expose string
	// Credentials answers Access-Control-Allow-Credentials to origins
	// listed by name (never to "*").
	Credentials bool
	MaxAge      time.Duration // MaxAge's maxAge; DefaultMaxAge its def
	// DefaultMaxAge is the preflight cache time when MaxAge is zero.
	DefaultMaxAge time.Duration
}

// Policy is a CORS policy prepared once: what a preflight may ask for,
// and the headers of the answers. Safe for concurrent use.
type Policy struct {
	allow       List
	methods     map[string]bool
	allowM      string // Access-Control-Allow-Methods
	headers     map[string]bool
	allowH      string // the allowed headers, before any prefixed ones
	prefix      string
	expose      string
	credentials bool
	maxAge      string // "" for none
}

// NewPolicy prepares o.
func NewPolicy(o PolicyOptions) *Policy {
	p := &Policy{allow: Parse(o.Origins), methods: map[string]bool{}, headers: map[string]bool{},
		prefix: o.HeaderPrefix, expose: o.Expose, credentials: o.Credentials}
	var ms []string
	for _, m := range append(append([]string(nil), o.Methods...), http.MethodOptions) {
		if m = strings.ToUpper(strings.TrimSpace(m)); m != "" && !p.methods[m] {
			p.methods[m] = true
			ms = append(ms, m)
		}
	}
	p.allowM = strings.Join(ms, ", ")
	var hs []string
	for _, name := range o.Headers {
		if name = strings.ToLower(strings.TrimSpace(name)); mcpheader.IsToken(name) && !p.headers[name] {
			p.headers[name] = true
			hs = append(hs, name)
		}
	}
	p.allowH = strings.Join(hs, ", ")
	p.maxAge = MaxAge(o.MaxAge, o.DefaultMaxAge)
	return p
}

// Allows reports whether origin is on the policy's allow-list.
func (p *Policy) Allows(origin string) bool {
	ok, _ := p.allow.Match(origin)
	return ok
}

// Apply applies the policy to r, setting the CORS headers of its answer
// on hdr. A request that is not a preflight gets, when it has one
// allowed Origin, the headers that let the page read the answer, and
// preflight is false: the caller serves it. A preflight (OPTIONS with
// Access-Control-Request-Method) is the caller's to answer: 204 when
// refusal is "", else 403 saying refusal, with no Access-Control-*
// header (Apply sets none then), so the browser fails it.
func (p *Policy) Apply(hdr http.Header, r *http.Request) (preflight bool, refusal string) {
	AddVary(hdr, "Origin") // the answer depends on it, refusals too
	origins := r.Header["Origin"]
	preflight = r.Method == http.MethodOptions && len(r.Header["Access-Control-Request-Method"]) > 0
	if !preflight {
		if len(origins) == 1 {
			if ok, explicit := p.allow.Match(origins[0]); ok {
				p.setOrigin(hdr, origins[0], explicit)
				if p.expose != "" {
					hdr.Set("Access-Control-Expose-Headers", p.expose)
				}
			}
		}
		return false, ""
	}
	if len(origins) != 1 {
		return true, "a CORS preflight needs exactly one Origin"
	}
	AddVary(hdr, "Access-Control-Request-Method")
	AddVary(hdr, "Access-Control-Request-Headers")
	ok, explicit := p.allow.Match(origins[0])
	if !ok {
		return true, "Origin not allowed (CORS)"
	}
	if m := strings.TrimSpace(r.Header.Get("Access-Control-Request-Method")); !p.methods[m] {
		return true, "method " + strconv.Quote(m) + " not allowed (CORS; allowed: " + p.allowM + ")"
	}
	prefixed, bad := p.requested(r.Header["Access-Control-Request-Headers"])
	if bad != "" {
		return true, "header " + strconv.Quote(bad) + " not allowed (CORS)"
	}
	p.setOrigin(hdr, origins[0], explicit)
	hdr.Set("Access-Control-Allow-Methods", p.allowM)
	allowed := p.allowH
	if len(prefixed) > 0 {
		allowed += ", " + strings.Join(prefixed, ", ")
	}
	hdr.Set("Access-Control-Allow-Headers", allowed)
	if p.maxAge != "" {
		hdr.Set("Access-Control-Max-Age", p.maxAge)
	}
	if explicit && strings.EqualFold(r.Header.Get("Access-Control-Request-Private-Network"), "true") {
		// Private Network Access: a public page calling a server on a
		// private or loopback address; allowed for listed origins only.
		hdr.Set("Access-Control-Allow-Private-Network", "true")
	}
	return true, ""
}

// requested checks the headers a preflight asks for (names separated by
// commas, over one or more lines) and returns the prefixed ones among
// them, or the first that is not allowed.
func (p *Policy) requested(lines []string) (prefixed []string, bad string) {
	var seen map[string]bool
	for _, line := range lines {
		for name := range strings.SplitSeq(line, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			switch {
			case name == "" || seen[name]:
				continue
			case !mcpheader.IsToken(name):
				return nil, name
			case p.headers[name]:
			case p.prefix != "" && len(name) > len(p.prefix) && strings.HasPrefix(name, p.prefix):
				prefixed = append(prefixed, name)
			default:
				return nil, name
			}
			if seen == nil {
				seen = make(map[string]bool)
			}
			seen[name] = true
		}
	}
	return prefixed, ""
}

func (p *Policy) setOrigin(hdr http.Header, origin string, explicit bool) {
	if !explicit {
		hdr.Set("Access-Control-Allow-Origin", "*")
		return
	}
	hdr.Set("Access-Control-Allow-Origin", origin)
	if p.credentials {
		hdr.Set("Access-Control-Allow-Credentials", "true")
	}
}

// AddVary adds name to hdr's Vary unless it is there already.
func AddVary(hdr http.Header, name string) {
	for _, v := range hdr.Values("Vary") {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), name) {
				return
			}
		}
	}
	hdr.Add("Vary", name)
}
