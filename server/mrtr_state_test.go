package server

// Tests of the sealed requestState of Multi Round-Trip Requests
// (SEP-2322): tampering, expiry, binding to the method, target and
// arguments, key rotation and key configuration, and the digest of the
// arguments. The helpers, among them addStateTargets and flipMiddle
// (shared with mrtr_http_test.go), are in mrtr_test.go.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// ---- C. requestState security ----

// target is one MRTR request of the state tests.
type target struct {
	method string
	params map[string]any
}

func (tg target) with(state string) map[string]any {
	out := map[string]any{"_meta": modernMeta(`{}`), "requestState": state}
	for k, v := range tg.params {
		out[k] = v
	}
	return out
}

func toolTarget(name, args string) target {
	return target{mcp.MethodToolsCall, map[string]any{"name": name, "arguments": jsontext.Value(args)}}
}

// stateOf runs tg's first round on p and returns its sealed state.
func stateOf(t *testing.T, p *modernPeer, tg target) string {
	t.Helper()
	params := tg.with("")
	delete(params, "requestState")
	raw, err := modernCall(t, p, tg.method, params)
	if err != nil {
		t.Fatal(err)
	}
	return inputRequired(t, raw).RequestState
}

// wantRejected retries tg with state and checks -32602 without a run.
func wantRejected(t *testing.T, p *modernPeer, probe *mrtrProbe, tg target, state string) {
	t.Helper()
	before := probe.count()
	_, err := modernCall(t, p, tg.method, tg.with(state))
	wantRPCError(t, err, mcp.CodeInvalidParams, "requestState")
	if n := probe.count(); n != before {
		t.Errorf("the handler ran %d time(s) with a rejected state", n-before)
	}
}

// wantAccepted retries tg with state and checks the handler got want.
func wantAccepted(t *testing.T, p *modernPeer, probe *mrtrProbe, tg target, state, want string) {
	t.Helper()
	before := probe.count()
	raw, err := modernCall(t, p, tg.method, tg.with(state))
	if err != nil {
		t.Fatalf("retry with a good state: %v", err)
	}
	if !bytes.Contains(raw, []byte(`"ok `+want+`"`)) {
		t.Errorf("retry = %s, want the handler's %q", raw, want)
	}
	if runs := probe.all()[before:]; len(runs) != 1 || runs[0].state != want {
		t.Errorf("runs %+v, want one with state %q", runs, want)
	}
}

// TestRequestStateTampering: every damaged state is -32602 and the
// handler never runs.
func TestRequestStateTampering(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addStateTargets(s, probe)
	p := newModernPeer(t, s, false)
	tg := toolTarget("a", `{"city":"Paris","days":2}`)
	good := stateOf(t, p, tg)
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(good, sealedPrefix))
	reseal := func(b []byte) string { return sealedPrefix + base64.RawURLEncoding.EncodeToString(b) }
	flipped := bytes.Clone(raw)
	flipped[len(flipped)-1] ^= 1 // the last byte of the GCM tag
	keyIDFlipped := bytes.Clone(raw)
	keyIDFlipped[0] ^= 0x80
	nonceFlipped := bytes.Clone(raw)
	nonceFlipped[6] ^= 1
	for name, bad := range map[string]string{
		"byte flipped in the middle": flipMiddle(good),
		"tag bit flipped":            reseal(flipped),
		"key id altered":             reseal(keyIDFlipped),
		"nonce altered":              reseal(nonceFlipped),
		"text appended":              good + "x",
		"block appended":             good + "AAAA",
		"truncated by one":           good[:len(good)-1],
		"truncated by half":          good[:len(good)/2],
		"truncated to the key id":    reseal(raw[:4]),
		"truncated before the tag":   reseal(raw[:4+12+8]),
		"empty after the prefix":     sealedPrefix,
		"prefix only with padding":   sealedPrefix + "====",
		"no prefix":                  strings.TrimPrefix(good, sealedPrefix),
		"other prefix":               "mk2." + strings.TrimPrefix(good, sealedPrefix),
		"garbage":                    "hello, world",
		"invalid base64":             sealedPrefix + "!!!!****",
		"the handler's plain state":  "secret-a",
		"json":                       `{"s":"secret-a"}`,
	} {
		t.Run(name, func(t *testing.T) { wantRejected(t, p, probe, tg, bad) })
	}
	// Standard base64 (with padding, + and /) is not the token's alphabet;
	// skip it in the rare case it spells the same text.
	if std := sealedPrefix + base64.StdEncoding.EncodeToString(raw); std != good {
		wantRejected(t, p, probe, tg, std)
	}
	// The good state still works (the rejections above changed nothing).
	wantAccepted(t, p, probe, tg, good, "secret-a")
}

// TestRequestStateExpiry drives the sealer's clock: a state is accepted
// up to its TTL (default and configured) and rejected after.
func TestRequestStateExpiry(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  time.Duration
		ttl  time.Duration
	}{
		{"default", 0, DefaultRequestStateTTL},
		{"configured", 30 * time.Second, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			probe := &mrtrProbe{}
			s := New(&Options{RequestStateTTL: tc.opt})
			var clock atomic.Int64
			start := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
			clock.Store(start.UnixNano())
			s.sealer.now = func() time.Time { return time.Unix(0, clock.Load()) }
			addStateTargets(s, probe)
			p := newModernPeer(t, s, false)
			tg := toolTarget("a", `{}`)
			state := stateOf(t, p, tg)
			clock.Store(start.Add(tc.ttl - time.Second).UnixNano())
			wantAccepted(t, p, probe, tg, state, "secret-a")
			clock.Store(start.Add(tc.ttl + time.Second).UnixNano())
			wantRejected(t, p, probe, tg, state)
			clock.Store(start.Add(24 * time.Hour).UnixNano())
			wantRejected(t, p, probe, tg, state)
		})
	}
}

// TestRequestStateBinding: a state opens only for the method, target and
// arguments it was issued for.
func TestRequestStateBinding(t *testing.T) {
	leakCheck(t)
	probe := &mrtrProbe{}
	s := New(nil)
	addStateTargets(s, probe)
	p := newModernPeer(t, s, false)
	toolA := toolTarget("a", `{"city":"Paris","days":2}`)
	promptA := target{mcp.MethodPromptsGet, map[string]any{"name": "a", "arguments": map[string]string{"x": "1"}}}
	resOne := target{mcp.MethodResourcesRead, map[string]any{"uri": "test://one"}}
	stTool, stPrompt, stRes := stateOf(t, p, toolA), stateOf(t, p, promptA), stateOf(t, p, resOne)
	// Same target name and the same (empty) arguments: only the method
	// tells these two apart.
	bareTool := toolTarget("a", `{}`)
	barePrompt := target{mcp.MethodPromptsGet, map[string]any{"name": "a"}}
	stBareTool, stBarePrompt := stateOf(t, p, bareTool), stateOf(t, p, barePrompt)
	for _, tc := range []struct {
		name  string
		tg    target
		state string
	}{
		{"tool a → tool b", toolTarget("b", `{"city":"Paris","days":2}`), stTool},
		{"tool a → other city", toolTarget("a", `{"city":"Lyon","days":2}`), stTool},
		{"tool a → other days", toolTarget("a", `{"city":"Paris","days":3}`), stTool},
		{"tool a → fewer arguments", toolTarget("a", `{"city":"Paris"}`), stTool},
		{"tool a → no arguments", toolTarget("a", `{}`), stTool},
		{"tool a → prompt a (same name)", promptA, stTool},
		{"prompt a → prompt p2", target{mcp.MethodPromptsGet, map[string]any{"name": "p2", "arguments": map[string]string{"x": "1"}}}, stPrompt},
		{"prompt a → other argument", target{mcp.MethodPromptsGet, map[string]any{"name": "a", "arguments": map[string]string{"x": "2"}}}, stPrompt},
		{"prompt a → tool a", toolA, stPrompt},
		{"resource one → two", target{mcp.MethodResourcesRead, map[string]any{"uri": "test://two"}}, stRes},
		{"resource → tool", toolA, stRes},
		{"tool a → prompt a, both without arguments", barePrompt, stBareTool},
		{"prompt a → tool a, both without arguments", bareTool, stBarePrompt},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRejected(t, p, probe, tc.tg, tc.state) })
	}
	wantAccepted(t, p, probe, toolA, stTool, "secret-a")
	wantAccepted(t, p, probe, promptA, stPrompt, "prompt-a")
	wantAccepted(t, p, probe, resOne, stRes, "res-test://one")
	wantAccepted(t, p, probe, bareTool, stBareTool, "secret-a")
	wantAccepted(t, p, probe, barePrompt, stBarePrompt, "prompt-a")
	// RFC 8785: the same arguments re-encoded (member order, whitespace,
	// number and string spelling) still match.
	wantAccepted(t, p, probe, toolTarget("a", `{ "days" : 2 , "city" : "Pa\u0072is" }`), stTool, "secret-a")
}

// keyID is the id a sealed token names its key with.
func keyID(t *testing.T, token string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, sealedPrefix))
	if err != nil || len(b) < 4 {
		t.Fatalf("token %q: %v", token, err)
	}
	return b[:4]
}

// TestRequestStateKeys: rotated-away and foreign keys are rejected; a
// key that is still in the ring opens the states it sealed, while new
// states are sealed with the first key.
func TestRequestStateKeys(t *testing.T) {
	leakCheck(t)
	k1, k2 := RequestStateKey(bytes.Repeat([]byte{1}, RequestStateKeySize)), RequestStateKey(bytes.Repeat([]byte{2}, RequestStateKeySize))
	id1, id2 := sha256.Sum256(k1[:]), sha256.Sum256(k2[:])
	tg := toolTarget("a", `{"city":"Paris"}`)
	peer := func(t *testing.T, keys ...RequestStateKey) (*modernPeer, *mrtrProbe) {
		probe := &mrtrProbe{}
		s := New(&Options{RequestStateKeys: keys})
		addStateTargets(s, probe)
		return newModernPeer(t, s, false), probe
	}
	old, oldProbe := peer(t, k1)
	st1 := stateOf(t, old, tg)
	if !bytes.Equal(keyID(t, st1), id1[:4]) {
		t.Fatalf("state sealed with key id %x, want %x", keyID(t, st1), id1[:4])
	}

	t.Run("rotated away", func(t *testing.T) {
		p, probe := peer(t, k2)
		wantRejected(t, p, probe, tg, st1)
	})
	t.Run("foreign random key", func(t *testing.T) {
		p, probe := peer(t)
		other, _ := peer(t)
		wantRejected(t, p, probe, tg, stateOf(t, other, tg))
		wantRejected(t, p, probe, tg, st1)
	})
	t.Run("still in the ring", func(t *testing.T) {
		p, probe := peer(t, k2, k1)
		wantAccepted(t, p, probe, tg, st1, "secret-a")
		st2 := stateOf(t, p, tg)
		if got := keyID(t, st2); !bytes.Equal(got, id2[:4]) || bytes.Equal(got, id1[:4]) {
			t.Errorf("new state sealed with key id %x, want the new key's %x", got, id2[:4])
		}
		wantAccepted(t, p, probe, tg, st2, "secret-a")
		// The old server, which never had k2, cannot open it.
		wantRejected(t, old, oldProbe, tg, st2)
	})
	t.Run("same key, other instance", func(t *testing.T) {
		p, probe := peer(t, k1)
		wantAccepted(t, p, probe, tg, st1, "secret-a")
	})
}

// TestRequestStateKeyConfig: a key of the wrong size cannot be built
// (its size is its type); ParseRequestStateKey reads hex and base64 and
// refuses anything else with an error; New skips an all-zero key (an
// unset one), logs it, and never panics.
func TestRequestStateKeyConfig(t *testing.T) {
	want := RequestStateKey(bytes.Repeat([]byte{0xab}, RequestStateKeySize))
	raw := want[:]
	for _, in := range []string{
		strings.Repeat("ab", RequestStateKeySize),
		" " + strings.Repeat("AB", RequestStateKeySize) + "\n",
		base64.StdEncoding.EncodeToString(raw),
		base64.RawStdEncoding.EncodeToString(raw),
		base64.URLEncoding.EncodeToString(raw),
		base64.RawURLEncoding.EncodeToString(raw),
	} {
		got, err := ParseRequestStateKey(in)
		if err != nil || got != want {
			t.Errorf("ParseRequestStateKey(%q) = %x, %v; want %x", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"":                       "is empty",
		"!!":                     "64 hex digits or the base64",
		strings.Repeat("ab", 16): "has 24 bytes, not 32",
		base64.StdEncoding.EncodeToString(raw[:31]): "has 31 bytes, not 32",
		strings.Repeat("0", 64):                     "all zeros",
	} {
		if _, err := ParseRequestStateKey(in); err == nil || !strings.Contains(err.Error(), msg) || !strings.HasPrefix(err.Error(), "server: ") {
			t.Errorf("ParseRequestStateKey(%q): %v, want an error saying %q", in, err, msg)
		}
	}

	var logged bytes.Buffer
	s := New(&Options{RequestStateKeys: []RequestStateKey{{}, want}, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if len(s.sealer.keys) != 1 || !strings.Contains(logged.String(), "all-zero key") || !strings.Contains(logged.String(), "index=0") {
		t.Errorf("New with a zero key kept %d keys and logged %q; want the zero key skipped and reported", len(s.sealer.keys), logged.String())
	}
	idWant := sha256.Sum256(want[:])
	if !bytes.Equal(s.sealer.keys[0].id[:], idWant[:4]) {
		t.Errorf("the sealing key is not the configured one")
	}
	// Only zero keys: one random key, so requests still work on one
	// instance.
	if s := New(&Options{RequestStateKeys: []RequestStateKey{{}}}); len(s.sealer.keys) != 1 {
		t.Errorf("New with only a zero key has %d keys, want one random key", len(s.sealer.keys))
	}
	// Invalid UTF-8 in Info is encoded, not a panic.
	if s := New(&Options{Info: mcp.Implementation{Name: "bad\xff"}}); !strings.Contains(string(s.serverInfoJSON), "bad\ufffd") {
		t.Errorf("serverInfo %s", s.serverInfoJSON)
	}
}

// TestArgsDigest: the digest is over the RFC 8785 form of the arguments.
func TestArgsDigest(t *testing.T) {
	same := [][]string{
		{`{"b":2,"a":"x"}`, ` { "a" : "x" , "b" : 2.0 } `, `{"a":"\u0078","b":2e0}`},
		{``, `{}`, ` {} `},
		{`{"n":{"z":[1,2],"y":null}}`, `{"n":{"y":null,"z":[1.0,2]}}`},
	}
	for _, group := range same {
		for _, v := range group[1:] {
			if !bytes.Equal(argsDigest(jsontext.Value(group[0])), argsDigest(jsontext.Value(v))) {
				t.Errorf("argsDigest(%s) != argsDigest(%s)", group[0], v)
			}
		}
	}
	differ := []string{`{"a":"x","b":2}`, `{"a":"x","b":3}`, `{"a":"X","b":2}`, `{"a":"x"}`, `{"a":"x","b":2,"c":null}`, `{"a":["x"],"b":2}`}
	seen := map[string]string{}
	for _, v := range differ {
		d := string(argsDigest(jsontext.Value(v)))
		if prev, dup := seen[d]; dup {
			t.Errorf("argsDigest(%s) == argsDigest(%s)", v, prev)
		}
		seen[d] = v
	}
}
