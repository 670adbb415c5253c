package server

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// DefaultRequestStateTTL is how long a sealed requestState stays valid.
const DefaultRequestStateTTL = 10 * time.Minute

// DefaultMaxRequestStateBytes is the default Options.MaxRequestStateBytes:
// 1 MiB of state, about 1.4 MB once sealed and encoded, well within the
// default 4 MiB request body of the HTTP transports.
const DefaultMaxRequestStateBytes = 1 << 20

// RequestStateKeySize is the size of a requestState key: AES-256.
const RequestStateKeySize = 32

// sealedPrefix versions the sealed requestState format.
const sealedPrefix = "mk1."

// stateAAD binds the ciphertext to its purpose.
var stateAAD = []byte("mcpkit requestState v1")

// sealer seals and opens requestState with AES-256-GCM (SEP-2322: state
// that steers the server must be integrity protected). The first key
// seals; every key opens, so keys rotate without breaking retries in
// flight. A key is named in the token by the first bytes of its SHA-256,
// never by the key itself.
type sealer struct {
	keys []sealKey
	ttl  time.Duration
	now  func() time.Time
	max  int // bytes of plaintext a state may carry
}

type sealKey struct {
	id   [4]byte
	aead cipher.AEAD
}

// RequestStateKey is an AES-256 key that seals the requestState of
// input-required results (Options.RequestStateKeys). Its size is its
// type, so a key of the wrong length cannot be built; the all-zero key is
// refused (see Options.RequestStateKeys). ParseRequestStateKey reads one
// from configuration.
type RequestStateKey [RequestStateKeySize]byte

// ParseRequestStateKey reads a key written as 64 hexadecimal digits or as
// the base64 (standard or URL alphabet, padded or not) of 32 bytes, as
// "openssl rand -hex 32" and "openssl rand -base64 32" print. Surrounding
// white space is ignored.
func ParseRequestStateKey(s string) (RequestStateKey, error) {
	var k RequestStateKey
	s = strings.TrimSpace(s)
	if s == "" {
		return k, errors.New("server: the request state key is empty")
	}
	var b []byte
	var err error
	switch {
	case len(s) == 2*RequestStateKeySize:
		b, err = hex.DecodeString(s)
	default:
		b, err = base64.StdEncoding.DecodeString(s)
		if err != nil {
			b, err = base64.RawStdEncoding.DecodeString(s)
		}
		if err != nil {
			b, err = base64.URLEncoding.DecodeString(s)
		}
		if err != nil {
			b, err = base64.RawURLEncoding.DecodeString(s)
		}
	}
	if err != nil {
		return k, errors.New("server: a request state key is 64 hex digits or the base64 of 32 bytes")
	}
	if len(b) != RequestStateKeySize {
		return k, fmt.Errorf("server: a request state key has %d bytes, not %d", len(b), RequestStateKeySize)
	}
	copy(k[:], b)
	if k == (RequestStateKey{}) {
		return k, errors.New("server: the request state key is all zeros")
	}
	return k, nil
}

// newSealer builds the sealer of keys; all-zero keys are skipped and
// reported in ignored (a zero key is an unset one, never a secret). With
// no usable key, it makes one random key (one instance).
func newSealer(keys []RequestStateKey, ttl time.Duration) (s *sealer, ignored []int) {
	if ttl <= 0 {
		ttl = DefaultRequestStateTTL
	}
	s = &sealer{ttl: ttl, now: time.Now}
	for i, k := range keys {
		if k == (RequestStateKey{}) {
			ignored = append(ignored, i)
			continue
		}
		s.add(k)
	}
	if len(s.keys) == 0 {
		var k RequestStateKey
		_, _ = rand.Read(k[:]) // crypto/rand never fails on supported platforms
		s.add(k)
	}
	return s, ignored
}

func (s *sealer) add(k RequestStateKey) {
	block, _ := aes.NewCipher(k[:]) // a 32-byte key is always valid
	aead, _ := cipher.NewGCM(block) // the standard nonce and tag sizes are always valid
	sum := sha256.Sum256(k[:])
	var sk sealKey
	copy(sk.id[:], sum[:4])
	sk.aead = aead
	s.keys = append(s.keys, sk)
}

// sealedState is what a sealed requestState carries.
type sealedState struct {
	Expires int64             `json:"e"`
	Method  string            `json:"m"`
	Target  string            `json:"t"`
	Digest  []byte            `json:"d"`           // SHA-256 of the canonical arguments
	Asked   map[string]string `json:"k,omitempty"` // input request key → method
	// Forms holds, per elicitation key, the requestedSchema its answer's
	// content must match, or false (URL mode: no content). A key without
	// an entry gets the shape check only.
	Forms     map[string]jsontext.Value `json:"f,omitempty"`
	State     string                    `json:"s,omitzero"`
	Principal string                    `json:"p,omitzero"`
	// Kept holds the answers of earlier rounds the handler did not ask
	// again, checked when they arrived, so that a handler asking one
	// question after another sees every answer so far.
	Kept mcp.InputResponses `json:"a,omitempty"`
	// Progress is the highest progress step sent for the exchange so far
	// (nil: none), so that the retry's run does not send a step again
	// (Request.Progress).
	Progress *float64 `json:"g,omitempty"`
}

// errBadState is the one error every opening failure maps to, so that a
// client learns nothing about why.
var errBadState = errors.New("requestState is invalid, expired or not for this request")

func (s *sealer) seal(st *sealedState) (string, error) {
	st.Expires = s.now().Add(s.ttl).Unix()
	plain, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	if s.max > 0 && len(plain) > s.max {
		return "", fmt.Errorf("the state would carry %d bytes (the handler's state, the forms asked and the answers kept from earlier rounds), over Options.MaxRequestStateBytes (%d)", len(plain), s.max)
	}
	k := s.keys[0]
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := make([]byte, 0, len(k.id)+len(nonce)+len(plain)+k.aead.Overhead())
	out = append(out, k.id[:]...)
	out = append(out, nonce...)
	out = k.aead.Seal(out, nonce, plain, stateAAD)
	return sealedPrefix + base64.RawURLEncoding.EncodeToString(out), nil
}

// open verifies token and checks that it belongs to this request.
func (s *sealer) open(token, method, target string, digest []byte, principal string) (*sealedState, error) {
	raw, ok := strings.CutPrefix(token, sealedPrefix)
	if !ok {
		return nil, errBadState
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) < 4 {
		return nil, errBadState
	}
	var key *sealKey
	for i := range s.keys {
		if subtle.ConstantTimeCompare(s.keys[i].id[:], b[:4]) == 1 {
			key = &s.keys[i]
			break
		}
	}
	if key == nil {
		return nil, errBadState
	}
	ns := key.aead.NonceSize()
	if len(b) < 4+ns+key.aead.Overhead() {
		return nil, errBadState
	}
	plain, err := key.aead.Open(nil, b[4:4+ns], b[4+ns:], stateAAD)
	if err != nil {
		return nil, errBadState
	}
	var st sealedState
	if json.Unmarshal(plain, &st) != nil {
		return nil, errBadState
	}
	if s.now().Unix() > st.Expires || st.Method != method || st.Target != target ||
		subtle.ConstantTimeCompare(st.Digest, digest) != 1 || st.Principal != principal {
		return nil, errBadState
	}
	return &st, nil
}

// argsDigest hashes arguments in canonical form (RFC 8785), so that a
// retry that re-encodes the same arguments still matches.
func argsDigest(args jsontext.Value) []byte {
	canon := jsontext.Value("{}")
	if len(args) > 0 {
		canon = args.Clone()
		if canon.Canonicalize() != nil {
			canon = args
		}
	}
	sum := sha256.Sum256(canon)
	return sum[:]
}
