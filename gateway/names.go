package gateway

import (
	"strings"
	"sync"
)

// kind is a kind of item an upstream offers.
type kind uint8

const (
	kindTool kind = iota
	kindPrompt
	kindResource
	kindTemplate
	kinds
)

func (k kind) String() string {
	return [...]string{"tool", "prompt", "resource", "template"}[k]
}

// Names and URIs: tools and prompts are "<prefix>_<name>", resources and
// templates "<prefix>+<uri>" ("+" is a URI scheme character, so a
// prefixed URI is still a URI, of scheme "<prefix>+<scheme>").
const (
	nameSep = "_"
	uriSep  = "+"
)

// uiScheme is the scheme of MCP Apps views (io.modelcontextprotocol/ui),
// which clients require: a view keeps it, and gets the prefix as the
// first segment instead ("ui://app/x" → "ui://fs/app/x").
const uiScheme = "ui://"

// skillScheme is the scheme of skills (io.modelcontextprotocol/skills):
// like a view, a skill file keeps it and gets the prefix as the first
// segment, an organizational prefix to the SEP ("skill://pdf/SKILL.md" →
// "skill://fs/pdf/SKILL.md": the skill's name, the final segment, stays).
const skillScheme = "skill://"

// keptSchemes are the schemes whose URIs keep them under a prefix.
var keptSchemes = []string{uiScheme, skillScheme}

// outer is the name the gateway's clients see for an upstream's item.
func outer(prefix string, k kind, inner string) string {
	if prefix == "" {
		return inner
	}
	if k == kindResource || k == kindTemplate {
		for _, scheme := range keptSchemes {
			if rest, ok := strings.CutPrefix(inner, scheme); ok {
				return scheme + prefix + "/" + rest
			}
		}
		return prefix + uriSep + inner
	}
	return prefix + nameSep + inner
}

// inner is the upstream's name for an item the clients name outerName;
// ok is false when outerName does not carry the prefix.
func inner(prefix string, k kind, outerName string) (string, bool) {
	if prefix == "" {
		return outerName, true
	}
	sep := nameSep
	if k == kindResource || k == kindTemplate {
		for _, scheme := range keptSchemes {
			if rest, ok := strings.CutPrefix(outerName, scheme+prefix+"/"); ok {
				return scheme + rest, true
			}
		}
		sep = uriSep
		// A kept scheme's URI has one outer name, the one above: not
		// "<prefix>+ui://..." nor "<prefix>+skill://...".
		if rest, ok := strings.CutPrefix(outerName, prefix+sep); ok {
			for _, scheme := range keptSchemes {
				if strings.HasPrefix(rest, scheme) {
					return "", false
				}
			}
		}
	}
	return strings.CutPrefix(outerName, prefix+sep)
}

// nameTable records which upstream registered each outer name, so that
// two upstreams never register the same one, and which upstream a name
// belongs to.
//
// A name belongs to the upstream listed first in Options.Upstreams among
// those that have listed it since the gateway started (its keeper), and
// to no other, whichever connected first: a keeper that dies, or stops
// listing the name, has the name withdrawn, never handed to the next
// upstream that lists it (a client holding an older list would send that
// upstream calls, with their arguments, meant for the keeper). It is
// registered again when its keeper lists it again. The only change of
// keeper is to an upstream listed earlier that lists the name for the
// first time (it was down when the other registered it, or added the
// item later): configuration order decides. The table remembers every
// name the upstreams have listed, for the gateway's life: its size is
// bounded by what the configured upstreams offer.
type nameTable struct {
	mu     sync.Mutex
	owner  [kinds]map[string]*upstream // registered now
	keeper [kinds]map[string]*upstream // the name belongs to
}

func newNameTable() *nameTable {
	t := &nameTable{}
	for k := range t.owner {
		t.owner[k] = make(map[string]*upstream)
		t.keeper[k] = make(map[string]*upstream)
	}
	return t
}

// claim gives name to u unless it belongs to an upstream listed before u;
// ok is false then. When an upstream listed after u held it, that
// upstream is returned as from: it has lost the name.
func (t *nameTable) claim(k kind, name string, u *upstream) (ok bool, from *upstream) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if kp := t.keeper[k][name]; kp != nil && kp.index < u.index {
		return false, nil
	}
	t.keeper[k][name] = u
	o := t.owner[k][name]
	t.owner[k][name] = u
	if o == u {
		o = nil
	}
	return true, o
}

// release frees the names u holds among names: they stay u's (nobody
// else may claim them) until an upstream listed earlier claims them.
func (t *nameTable) release(k kind, u *upstream, names ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range names {
		if t.owner[k][n] == u {
			delete(t.owner[k], n)
		}
	}
}

// lookup returns the upstream holding name.
func (t *nameTable) lookup(k kind, name string) *upstream {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.owner[k][name]
}
