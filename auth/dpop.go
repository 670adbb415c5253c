package auth

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-json-experiment/json"
)

// Defaults and limits of DPoP proof checking (RFC 9449).
const (
	// DefaultDPoPIATWindow is how far a proof's iat may lie from the
	// resource server's clock, in the past or in the future (RFC 9449
	// §4.3, §11.1): a proof is usable for at most twice this long, and
	// its jti is remembered for as long as it is usable.
	DefaultDPoPIATWindow = time.Minute
	// DefaultDPoPNonceLifetime is how long a server-issued DPoP nonce is
	// accepted after it was minted (RFC 9449 §9).
	DefaultDPoPNonceLifetime = 5 * time.Minute
	// MaxDPoPProofBytes caps the DPoP header: a proof larger than this is
	// refused before it is parsed. An ES256 proof is about 600 bytes, one
	// carrying a 4096-bit RSA key about 2 KiB.
	MaxDPoPProofBytes = 8 << 10
	// MaxDPoPJTIBytes caps a proof's jti.
	MaxDPoPJTIBytes = 256
	// minNonceKeyBytes is the shortest DPoPOptions.NonceKey accepted.
	minNonceKeyBytes = 32
)

// DefaultDPoPAlgorithms are the proof signature algorithms accepted by
// default: asymmetric only (RFC 9449 §4.3: never "none", never a MAC).
var DefaultDPoPAlgorithms = []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.PS256, jose.RS256, jose.EdDSA}

// DPoP error codes (RFC 9449 §7.1, §9).
const (
	ErrCodeInvalidDPoPProof = "invalid_dpop_proof"
	ErrCodeUseDPoPNonce     = "use_dpop_nonce"
)

// DPoPError is the error of a refused DPoP proof: Code is
// invalid_dpop_proof or use_dpop_nonce. It never holds the proof or the
// access token.
type DPoPError struct {
	Code        string
	Description string
}

func (e *DPoPError) Error() string { return "auth: " + e.Code + ": " + e.Description }

func badProof(format string, args ...any) error {
	return &DPoPError{Code: ErrCodeInvalidDPoPProof, Description: fmt.Sprintf(format, args...)}
}

// ReplayCache remembers the DPoP proofs already used (RFC 9449 §11.1).
// Seen records key until the time until and reports whether key was
// already recorded and not yet expired; recording and checking are one
// atomic step. Keys are fixed-length hashes (of the proof's key
// thumbprint and jti). An error makes the request fail closed with 503.
// Instances behind one load balancer must share one ReplayCache (the
// Redis one of store/redis, say) or a proof refused by one could be
// replayed to another.
type ReplayCache interface {
	Seen(ctx context.Context, key string, until time.Time) (bool, error)
}

// DPoPOptions configures a DPoPVerifier.
type DPoPOptions struct {
	// Required makes Require refuse every token that is not DPoP-bound
	// (bearer tokens). Without it, bearer tokens without a cnf.jkt are
	// accepted as before, and bound tokens need their proof.
	Required bool
	// Algorithms lists the accepted proof algorithms, advertised in the
	// algs parameter of DPoP challenges. Default DefaultDPoPAlgorithms.
	// "none" and HS* are refused.
	Algorithms []jose.SignatureAlgorithm
	// IATWindow is how far a proof's iat may be from now, either way.
	// Default DefaultDPoPIATWindow.
	IATWindow time.Duration
	// Replay remembers used proofs. Default: a MemoryReplayCache of
	// DefaultReplayCacheSize entries private to this verifier; share one
	// (or a Redis one) between every instance serving the resource.
	Replay ReplayCache
	// NonceKey, when set (at least 32 random bytes), makes the verifier
	// require server-issued nonces (RFC 9449 §9): a proof without a valid
	// one is answered 401 use_dpop_nonce with a fresh DPoP-Nonce header.
	// Nonces are sealed with this key (HMAC-SHA256 over their minting
	// time), so every instance sharing the key accepts the others'.
	NonceKey []byte
	// NonceLifetime is how long a nonce is accepted. Default
	// DefaultDPoPNonceLifetime.
	NonceLifetime time.Duration
	// TargetURL returns the URL a request was sent to, which a proof's
	// htu must name. Default (in Require): the origin of Options.Resource
	// followed by the request's path; the Host header is never trusted.
	TargetURL func(*http.Request) string

	now func() time.Time // tests
}

// DPoPVerifier checks DPoP proofs (RFC 9449 §4.3). It is safe for
// concurrent use.
type DPoPVerifier struct {
	o        DPoPOptions
	algs     []jose.SignatureAlgorithm
	algNames string
	window   time.Duration
	nonceTTL time.Duration
	replay   ReplayCache
	now      func() time.Time
}

// NewDPoPVerifier checks o and returns a verifier.
func NewDPoPVerifier(opts *DPoPOptions) (*DPoPVerifier, error) {
	var o DPoPOptions
	if opts != nil {
		o = *opts
	}
	v := &DPoPVerifier{o: o}
	v.algs = slices.Clone(o.Algorithms)
	if len(v.algs) == 0 {
		v.algs = slices.Clone(DefaultDPoPAlgorithms)
	}
	names := make([]string, 0, len(v.algs))
	for _, a := range v.algs {
		if isHMAC(a) || strings.EqualFold(string(a), "none") || strings.HasPrefix(string(a), "HS") {
			return nil, fmt.Errorf("auth: DPoP proofs must be signed with an asymmetric algorithm, not %s", a)
		}
		names = append(names, string(a))
	}
	v.algNames = strings.Join(names, " ")
	if len(o.NonceKey) > 0 && len(o.NonceKey) < minNonceKeyBytes {
		return nil, fmt.Errorf("auth: DPoPOptions.NonceKey must be at least %d bytes", minNonceKeyBytes)
	}
	v.o.NonceKey = slices.Clone(o.NonceKey)
	v.window = cmpDefault(o.IATWindow, DefaultDPoPIATWindow)
	v.nonceTTL = cmpDefault(o.NonceLifetime, DefaultDPoPNonceLifetime)
	v.now = o.now
	if v.now == nil {
		v.now = time.Now
	}
	v.replay = o.Replay
	if v.replay == nil {
		v.replay = NewMemoryReplayCache(0)
	}
	return v, nil
}

// Algorithms returns the accepted proof algorithms, space-separated (the
// algs of a DPoP challenge).
func (v *DPoPVerifier) Algorithms() string { return v.algNames }

// Required reports DPoPOptions.Required.
func (v *DPoPVerifier) Required() bool { return v.o.Required }

// UsesNonces reports whether proofs need a server-issued nonce.
func (v *DPoPVerifier) UsesNonces() bool { return len(v.o.NonceKey) > 0 }

// DPoPRequest is what a proof is checked against.
type DPoPRequest struct {
	// Proof is the value of the request's one DPoP header.
	Proof string
	// Method is the request's HTTP method (htm).
	Method string
	// URL is the URL the request was sent to (htu); its query and
	// fragment are ignored.
	URL string
	// AccessToken, when set, must be the proof's ath (its SHA-256 hash).
	// A resource server always sets it; a token endpoint never does.
	AccessToken string
	// JKT, when set, must be the thumbprint of the proof's key: the
	// cnf.jkt of the access token.
	JKT string
}

// Verify checks a proof (RFC 9449 §4.3): one compact JWS whose header
// has typ dpop+jwt, an accepted asymmetric alg and a public jwk (never a
// private or symmetric key) that verifies the signature; claims jti,
// htm, htu and iat, with htm and htu matching the request, iat within
// IATWindow of now; ath matching the access token (required when
// AccessToken is set, refused otherwise); the nonce when nonces are
// used; the key's RFC 7638 thumbprint matching JKT. Last, the proof's
// jti is recorded in the replay cache: a proof is accepted once. It
// returns the key's thumbprint. Errors are *DPoPError, or wrap
// ErrUnavailable when the replay cache fails.
func (v *DPoPVerifier) Verify(ctx context.Context, p DPoPRequest) (jkt string, err error) {
	jkt, c, err := v.parseProof(p.Proof)
	if err != nil {
		return "", err
	}
	now := v.now()
	iat, err := v.checkClaims(c, p, now)
	if err != nil {
		return "", err
	}
	if v.UsesNonces() && (c.Nonce == nil || !v.nonceValid(*c.Nonce, now)) {
		return "", &DPoPError{Code: ErrCodeUseDPoPNonce, Description: "a fresh DPoP nonce is required"}
	}
	if p.JKT != "" && !constEq(p.JKT, jkt) {
		return "", badProof("the proof's key is not the one the access token is bound to")
	}
	// The proof is remembered until iat+2×window: an instance whose clock
	// runs up to a window behind this one still accepts it until then.
	seen, err := v.replay.Seen(ctx, replayKey(jkt, c.JTI), iat.Add(2*v.window))
	if err != nil {
		return "", fmt.Errorf("%w: DPoP replay cache: %w", ErrUnavailable, err)
	}
	if seen {
		return "", badProof("the proof was already used (jti replayed)")
	}
	return jkt, nil
}

// dpopClaims are the claims of a DPoP proof that Verify reads.
type dpopClaims struct {
	JTI   string   `json:"jti"`
	HTM   string   `json:"htm"`
	HTU   string   `json:"htu"`
	IAT   *float64 `json:"iat"`
	ATH   *string  `json:"ath"`
	Nonce *string  `json:"nonce"`
}

// parseProof checks a proof's form, header and signature (with the
// public jwk of its own header) and returns the key's thumbprint and the
// proof's claims.
func (v *DPoPVerifier) parseProof(proof string) (jkt string, c dpopClaims, err error) {
	if proof == "" {
		return "", c, badProof("no DPoP proof")
	}
	if len(proof) > MaxDPoPProofBytes {
		return "", c, badProof("the DPoP proof exceeds %d bytes", MaxDPoPProofBytes)
	}
	jws, err := jose.ParseSignedCompact(proof, v.algs)
	if err != nil {
		return "", c, badProof("not a compact JWS with an accepted algorithm and a public jwk")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return "", c, badProof("typ is not dpop+jwt")
	}
	key := h.JSONWebKey
	if key == nil || key.Key == nil || !key.IsPublic() || !key.Valid() {
		return "", c, badProof("no public jwk in the header")
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return "", c, badProof("the signature does not verify with the header's jwk")
	}
	tp, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", c, badProof("the jwk has no thumbprint")
	}
	if err := json.Unmarshal(payload, &c, json.RejectUnknownMembers(false)); err != nil {
		return "", c, badProof("the claims are not a JSON object of the expected types")
	}
	return base64.RawURLEncoding.EncodeToString(tp), c, nil
}

// checkClaims checks jti, htm, htu, iat (against now) and ath against the
// request, and returns the proof's iat.
func (v *DPoPVerifier) checkClaims(c dpopClaims, p DPoPRequest, now time.Time) (time.Time, error) {
	switch {
	case c.JTI == "":
		return time.Time{}, badProof("no jti")
	case len(c.JTI) > MaxDPoPJTIBytes:
		return time.Time{}, badProof("jti exceeds %d bytes", MaxDPoPJTIBytes)
	case c.HTM == "" || c.HTU == "" || c.IAT == nil:
		return time.Time{}, badProof("htm, htu and iat are required")
	case c.HTM != p.Method:
		return time.Time{}, badProof("htm does not match the request method")
	}
	want, err := normalizeHTU(p.URL)
	if err != nil {
		return time.Time{}, fmt.Errorf("auth: the request URL: %w", err)
	}
	if got, err := normalizeHTU(c.HTU); err != nil || got != want {
		return time.Time{}, badProof("htu does not match the request URL")
	}
	if math.IsNaN(*c.IAT) || math.IsInf(*c.IAT, 0) || math.Abs(*c.IAT) > 1<<40 {
		return time.Time{}, badProof("iat is not a time")
	}
	iat := time.Unix(int64(*c.IAT), 0)
	if iat.Before(now.Add(-v.window)) || iat.After(now.Add(v.window)) {
		return time.Time{}, badProof("iat is outside the accepted window")
	}
	switch {
	case p.AccessToken != "" && c.ATH == nil:
		return time.Time{}, badProof("no ath")
	case p.AccessToken != "" && !constEq(*c.ATH, tokenHash(p.AccessToken)):
		return time.Time{}, badProof("ath does not match the access token")
	case p.AccessToken == "" && c.ATH != nil:
		return time.Time{}, badProof("ath without an access token")
	}
	return iat, nil
}

// tokenHash is the ath of an access token: base64url(SHA-256(token)).
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// replayKey names a proof in the replay cache: a hash of its key's
// thumbprint and its jti (jti values are unique per key only).
func replayKey(jkt, jti string) string {
	h := sha256.New()
	h.Write([]byte(jkt))
	h.Write([]byte{0})
	h.Write([]byte(jti))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func constEq(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// NewNonce mints a DPoP nonce ("" when nonces are not used): its
// minting time and an HMAC of it, base64url-encoded. Nonces need no
// storage: any instance holding NonceKey checks them.
func (v *DPoPVerifier) NewNonce() string {
	if !v.UsesNonces() {
		return ""
	}
	var b [8 + sha256.Size]byte
	binary.BigEndian.PutUint64(b[:8], uint64(v.now().Unix()))
	copy(b[8:], v.nonceMAC(b[:8]))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (v *DPoPVerifier) nonceMAC(ts []byte) []byte {
	m := hmac.New(sha256.New, v.o.NonceKey)
	m.Write([]byte("mcpkit dpop nonce\x00"))
	m.Write(ts)
	return m.Sum(nil)
}

// nonceValid reports whether n was minted with NonceKey at most
// NonceLifetime ago (and not further in the future than IATWindow, the
// clock skew allowed between instances).
func (v *DPoPVerifier) nonceValid(n string, now time.Time) bool {
	b, err := base64.RawURLEncoding.DecodeString(n)
	if err != nil || len(b) != 8+sha256.Size {
		return false
	}
	if !hmac.Equal(b[8:], v.nonceMAC(b[:8])) {
		return false
	}
	ts := binary.BigEndian.Uint64(b[:8])
	if ts > math.MaxInt64 {
		return false
	}
	minted := time.Unix(int64(ts), 0)
	return !minted.Before(now.Add(-v.nonceTTL)) && !minted.After(now.Add(v.window))
}

var errHTU = errors.New("not an absolute http(s) URL")

// normalizeHTU returns the form of a URL that htu values are compared in
// (RFC 9449 §4.3: without query and fragment, after the syntax- and
// scheme-based normalization of RFC 3986 §6.2.2 and §6.2.3): scheme and
// host in lower case, no default port, percent-encodings in upper case
// and decoded when they encode an unreserved character, dot segments
// removed, an empty path made "/". User information is refused.
func normalizeHTU(raw string) (string, error) {
	raw, _, _ = strings.Cut(raw, "#")
	raw, _, _ = strings.Cut(raw, "?")
	scheme, rest, ok := strings.Cut(raw, "://")
	scheme = strings.ToLower(scheme)
	if !ok || (scheme != "http" && scheme != "https") {
		return "", errHTU
	}
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if authority == "" || strings.ContainsAny(authority, "@ \t") {
		return "", errHTU
	}
	host, port := strings.ToLower(authority), ""
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host, port = host[:i], host[i+1:]
		for _, c := range port {
			if c < '0' || c > '9' {
				return "", errHTU
			}
		}
	}
	if host == "" {
		return "", errHTU
	}
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	p, err := normPercent(path)
	if err != nil {
		return "", err
	}
	p = removeDotSegments(p)
	if p == "" {
		p = "/"
	}
	out := scheme + "://" + host
	if port != "" {
		out += ":" + port
	}
	return out + p, nil
}

// normPercent upper-cases percent-encodings and decodes those of
// unreserved characters (RFC 3986 §6.2.2.1, §6.2.2.2).
func normPercent(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", errors.New("malformed percent-encoding")
		}
		c := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(s[i+1 : i+3]))
		}
		i += 2
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// removeDotSegments is the algorithm of RFC 3986 §5.2.4 on an absolute
// path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	var out []string
	segs := strings.Split(p, "/")
	for i, s := range segs {
		switch s {
		case ".":
			if i == len(segs)-1 {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if i == len(segs)-1 {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return strings.Join(out, "/")
}
