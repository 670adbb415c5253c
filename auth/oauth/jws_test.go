package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"
	"testing"
)

// referenceSignJWT is the hand-written signer auth/oauth had before it
// signed with go-jose: the reference for the bytes on the wire.
func referenceSignJWT(key crypto.Signer, alg string, header, claims map[string]any) (string, error) {
	h := map[string]any{"alg": alg}
	for k, v := range header {
		h[k] = v
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb)
	var hash crypto.Hash
	switch alg[2:] {
	case "256":
		hash = crypto.SHA256
	case "384":
		hash = crypto.SHA384
	case "512":
		hash = crypto.SHA512
	default:
		return "", fmt.Errorf("oauth: unsupported algorithm %s", alg)
	}
	var digest []byte
	switch hash {
	case crypto.SHA256:
		s := sha256.Sum256([]byte(input))
		digest = s[:]
	case crypto.SHA384:
		s := sha512.Sum384([]byte(input))
		digest = s[:]
	default:
		s := sha512.Sum512([]byte(input))
		digest = s[:]
	}
	var opts crypto.SignerOpts = hash
	if alg[:2] == "PS" {
		opts = &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: hash}
	}
	sig, err := key.Sign(rand.Reader, digest, opts)
	if err != nil {
		return "", err
	}
	if alg[:2] == "ES" {
		// JWS wants R || S, each the size of the curve order (RFC 7518 §3.4).
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &rs); err != nil {
			return "", fmt.Errorf("oauth: ECDSA signature: %w", err)
		}
		n := (key.Public().(*ecdsa.PublicKey).Curve.Params().BitSize + 7) / 8
		raw := make([]byte, 2*n)
		rs.R.FillBytes(raw[:n])
		rs.S.FillBytes(raw[n:])
		sig = raw
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// kmsKey is a crypto.Signer that is not an *ecdsa.PrivateKey or an
// *rsa.PrivateKey, as a key held in a KMS would be.
type kmsKey struct{ s crypto.Signer }

func (k kmsKey) Public() crypto.PublicKey { return k.s.Public() }
func (k kmsKey) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return k.s.Sign(r, digest, opts)
}

// TestSignJWTWire checks that the go-jose signer puts on the wire what the
// hand-written one did: the same header and claims segments (byte for
// byte), and for RS256, whose signatures are deterministic, the same JWS;
// the randomized ES and PS signatures verify, PS with the salt as long as
// the hash that RFC 7518 §3.5 requires. Each for a native key and a
// crypto.Signer of another type.
func TestSignJWTWire(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwk, err := ecPublicJWK(&ec.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"iss": "c<&>", "aud": "https://as.example", "iat": 1700000000, "jti": "x", "n": 1.5}
	headers := []map[string]any{nil, {"typ": "JWT"}, {"typ": "dpop+jwt", "jwk": jwk}}
	for _, tc := range []struct {
		alg string
		key crypto.Signer
	}{
		{"RS256", rk}, {"RS384", rk}, {"RS512", rk}, {"PS256", rk}, {"PS384", rk}, {"PS512", rk},
		{"ES256", ec}, {"ES384", ec384},
	} {
		for _, key := range []crypto.Signer{tc.key, kmsKey{tc.key}} {
			for _, h := range headers {
				name := fmt.Sprintf("%s/%T/%d", tc.alg, key, len(h))
				got, err := signJWT(key, tc.alg, h, claims)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want, err := referenceSignJWT(key, tc.alg, h, claims)
				if err != nil {
					t.Fatalf("%s: reference: %v", name, err)
				}
				gi, wi := got[:strings.LastIndexByte(got, '.')], want[:strings.LastIndexByte(want, '.')]
				if gi != wi {
					t.Errorf("%s: signed input\n got %s\nwant %s", name, gi, wi)
				}
				if strings.HasPrefix(tc.alg, "RS") && got != want {
					t.Errorf("%s: JWS differs from the reference", name)
				}
				if err := verifyStrict(key.Public(), tc.alg, got); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}
	}
	if _, err := signJWT(ec, "ES384", nil, claims); err == nil {
		t.Error("ES384 with a P-256 key signed")
	}
}

// verifyStrict verifies a compact JWS under alg with pub, holding PS
// signatures to a salt as long as the hash.
func verifyStrict(pub crypto.PublicKey, alg, s string) error {
	_, _, input, sig, err := parseJWS(s)
	if err != nil {
		return err
	}
	hash := map[string]crypto.Hash{"256": crypto.SHA256, "384": crypto.SHA384, "512": crypto.SHA512}[alg[2:]]
	h := hash.New()
	h.Write([]byte(input))
	digest := h.Sum(nil)
	switch alg[:2] {
	case "RS":
		return rsa.VerifyPKCS1v15(pub.(*rsa.PublicKey), hash, digest, sig)
	case "PS":
		return rsa.VerifyPSS(pub.(*rsa.PublicKey), hash, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: hash})
	}
	k := pub.(*ecdsa.PublicKey)
	n := (k.Curve.Params().BitSize + 7) / 8
	if len(sig) != 2*n || !ecdsa.Verify(k, digest, new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])) {
		return fmt.Errorf("bad %s signature", alg)
	}
	return nil
}
