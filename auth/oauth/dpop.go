package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DPoPKey is the proof-of-possession key of a client using DPoP (RFC 9449):
// set Transport.DPoP to one and the Transport asks for DPoP-bound access
// tokens, signs a fresh proof for every token request and, with a DPoP
// token, for every request to the MCP server, and answers server nonce
// challenges (use_dpop_nonce) by retrying once with the nonce, which it
// then keeps per origin. The key signs ES256 proofs. A DPoPKey is safe for
// concurrent use.
type DPoPKey struct {
	key        *ecdsa.PrivateKey
	jwk        map[string]any
	thumbprint string

	mu     sync.Mutex
	nonces map[string]string // by canonical origin
}

// NewDPoPKey generates a P-256 DPoP key.
func NewDPoPKey() (*DPoPKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return NewDPoPKeyFrom(k)
}

// NewDPoPKeyFrom makes a DPoPKey of an existing P-256 key (one kept
// across runs keeps the tokens bound to it usable).
func NewDPoPKeyFrom(k *ecdsa.PrivateKey) (*DPoPKey, error) {
	if _, err := jwsAlg(k, "ES256"); err != nil {
		return nil, err
	}
	jwk, err := ecPublicJWK(&k.PublicKey)
	if err != nil {
		return nil, err
	}
	return &DPoPKey{key: k, jwk: jwk, thumbprint: jwkThumbprint(jwk)}, nil
}

// Thumbprint returns the RFC 7638 SHA-256 thumbprint of the public key,
// the value a bound token carries as cnf.jkt.
func (k *DPoPKey) Thumbprint() string { return k.thumbprint }

// Proof returns a DPoP proof JWT for a request with the given method and
// URL (its query and fragment are left out of htu). A non-empty
// accessToken adds its ath hash; the nonce last received from the URL's
// origin, if any, is included.
func (k *DPoPKey) Proof(method, target, accessToken string) (string, error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", err
	}
	p, _, err := k.proof(method, u, accessToken)
	return p, err
}

// proof makes a proof for a request to u and returns the nonce it used.
func (k *DPoPKey) proof(method string, u *url.URL, accessToken string) (proof, nonce string, err error) {
	htu := *u
	htu.RawQuery, htu.ForceQuery, htu.Fragment, htu.RawFragment, htu.User = "", false, "", "", nil
	claims := map[string]any{
		"jti": randomString(16),
		"htm": method,
		"htu": htu.String(),
		"iat": time.Now().Unix(),
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if nonce = k.nonce(u); nonce != "" {
		claims["nonce"] = nonce
	}
	proof, err = signJWT(k.key, "ES256", map[string]any{"typ": "dpop+jwt", "jwk": k.jwk}, claims)
	return proof, nonce, err
}

func (k *DPoPKey) nonce(u *url.URL) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nonces[canonicalOrigin(u)]
}

// noteNonce keeps the DPoP-Nonce of a response from u's origin and
// returns it ("" when the response has none).
func (k *DPoPKey) noteNonce(u *url.URL, h http.Header) string {
	n := strings.TrimSpace(h.Get("DPoP-Nonce"))
	if n == "" {
		return ""
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.nonces == nil {
		k.nonces = map[string]string{}
	}
	k.nonces[canonicalOrigin(u)] = n
	return n
}
