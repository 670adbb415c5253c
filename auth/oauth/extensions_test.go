package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// parseJWS splits and decodes a compact JWS without verifying it.
func parseJWS(s string) (header, claims map[string]any, input string, sig []byte, err error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return nil, nil, "", nil, errors.New("not a compact JWS")
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, nil, "", nil, err
	}
	if err := json.Unmarshal(hb, &header); err != nil {
		return nil, nil, "", nil, err
	}
	if err := json.Unmarshal(cb, &claims); err != nil {
		return nil, nil, "", nil, err
	}
	return header, claims, parts[0] + "." + parts[1], sig, nil
}

// verifyES256 verifies an ES256 JWS signature (R || S) with pub.
func verifyES256(pub *ecdsa.PublicKey, input string, sig []byte) bool {
	if len(sig) != 64 {
		return false
	}
	h := sha256.Sum256([]byte(input))
	return ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
}

// verifyJWT verifies a JWS signed with key's public half (ES256 or RS256)
// and returns its header and claims.
func verifyJWT(pub crypto.PublicKey, s string) (header, claims map[string]any, err error) {
	header, claims, input, sig, err := parseJWS(s)
	if err != nil {
		return nil, nil, err
	}
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if header["alg"] != "ES256" || !verifyES256(k, input, sig) {
			return nil, nil, errors.New("bad ES256 signature")
		}
	case *rsa.PublicKey:
		h := sha256.Sum256([]byte(input))
		if header["alg"] != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, h[:], sig) != nil {
			return nil, nil, errors.New("bad RS256 signature")
		}
	default:
		return nil, nil, fmt.Errorf("key %T", pub)
	}
	return header, claims, nil
}

// verifyDPoPProof checks a DPoP proof the way a server does (RFC 9449
// §4.3, independently of the client's code) and returns its header,
// claims and the RFC 7638 thumbprint of its key.
func verifyDPoPProof(proof string) (header, claims map[string]any, jkt string, err error) {
	header, claims, input, sig, err := parseJWS(proof)
	if err != nil {
		return nil, nil, "", err
	}
	if header["typ"] != "dpop+jwt" || header["alg"] != "ES256" {
		return nil, nil, "", fmt.Errorf("typ %v alg %v", header["typ"], header["alg"])
	}
	jwk, _ := header["jwk"].(map[string]any)
	if jwk == nil || jwk["d"] != nil || jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
		return nil, nil, "", fmt.Errorf("jwk %v", jwk)
	}
	x, err1 := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["x"]))
	y, err2 := base64.RawURLEncoding.DecodeString(fmt.Sprint(jwk["y"]))
	if err := errors.Join(err1, err2); err != nil || len(x) != 32 || len(y) != 32 {
		return nil, nil, "", fmt.Errorf("jwk coordinates: %v", err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, nil, "", err
	}
	if !verifyES256(pub, input, sig) {
		return nil, nil, "", errors.New("proof signature does not verify")
	}
	iat, _ := claims["iat"].(float64)
	if _, ok := claims["jti"].(string); !ok || time.Since(time.Unix(int64(iat), 0)).Abs() > time.Minute {
		return nil, nil, "", errors.New("jti or iat")
	}
	// RFC 7638: the required members, lexicographic order, no spaces.
	canon := fmt.Sprintf(`{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}`, jwk["x"], jwk["y"])
	sum := sha256.Sum256([]byte(canon))
	return header, claims, base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

func pemOf(t *testing.T, typ string, der []byte) []byte {
	t.Helper()
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func TestParsePrivateKeyPEMAndSign(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	p8ec, _ := x509.MarshalPKCS8PrivateKey(ec)
	sec1, _ := x509.MarshalECPrivateKey(ec)
	p8rsa, _ := x509.MarshalPKCS8PrivateKey(rk)
	for _, tc := range []struct {
		name string
		pem  []byte
		pub  crypto.PublicKey
		alg  string
	}{
		{"pkcs8 ec", pemOf(t, "PRIVATE KEY", p8ec), &ec.PublicKey, "ES256"},
		{"sec1 ec", pemOf(t, "EC PRIVATE KEY", sec1), &ec.PublicKey, "ES256"},
		{"pkcs8 rsa", pemOf(t, "PRIVATE KEY", p8rsa), &rk.PublicKey, "RS256"},
		{"pkcs1 rsa", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk)), &rk.PublicKey, "RS256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParsePrivateKeyPEM(tc.pem)
			if err != nil {
				t.Fatal(err)
			}
			alg, err := jwsAlg(k, "")
			if err != nil || alg != tc.alg {
				t.Fatalf("alg %q, %v", alg, err)
			}
			s, err := signJWT(k, alg, nil, map[string]any{"sub": "x"})
			if err != nil {
				t.Fatal(err)
			}
			_, claims, err := verifyJWT(tc.pub, s)
			if err != nil || claims["sub"] != "x" {
				t.Fatalf("verify: %v %v", claims, err)
			}
		})
	}
	for _, alg := range []string{"PS256", "RS384"} {
		s, err := signJWT(rk, alg, nil, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		_, _, input, sig, _ := parseJWS(s)
		if alg == "PS256" {
			h := sha256.Sum256([]byte(input))
			if rsa.VerifyPSS(&rk.PublicKey, crypto.SHA256, h[:], sig, nil) != nil {
				t.Error("PS256 does not verify")
			}
		} else if len(sig) != 256 {
			t.Errorf("RS384 signature of %d bytes", len(sig))
		}
	}
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if alg, _ := jwsAlg(ec384, ""); alg != "ES384" {
		t.Errorf("P-384 alg %s", alg)
	} else if s, err := signJWT(ec384, alg, nil, map[string]any{}); err != nil {
		t.Error(err)
	} else if _, _, _, sig, _ := parseJWS(s); len(sig) != 96 {
		t.Errorf("ES384 signature of %d bytes", len(sig))
	}
	if _, err := ParsePrivateKeyPEM([]byte("nope")); err == nil {
		t.Error("garbage PEM accepted")
	}
	if _, err := jwsAlg(ec, "RS256"); err == nil {
		t.Error("RS256 accepted for an EC key")
	}
	if _, err := jwsAlg(rk, "ES256"); err == nil {
		t.Error("ES256 accepted for an RSA key")
	}
}

func TestClientCredentials(t *testing.T) {
	t.Run("client_secret_basic", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) {
			a.noDCR = true
			a.methods = []string{"client_secret_basic"}
			a.grantCheck = func(r *http.Request, f url.Values) string {
				id, sec, ok := r.BasicAuth()
				sec, _ = url.QueryUnescape(sec) // RFC 6749 §2.3.1
				if !ok || id != "cc" || sec != "s3c:ret" || f.Get("grant_type") != GrantTypeClientCredentials {
					return "invalid_client"
				}
				return ""
			}
		}, func(s *fakeRS) { s.prmScopes = []string{"mcp:a", "mcp:b"} }, func(tr *Transport) {
			tr.Authorize = nil // no user
			tr.Grant = ClientCredentials{}
			tr.Client = &ClientInfo{ClientID: "cc", ClientSecret: "s3c:ret"}
		})
		mustOK(t, e, "x")
		f := e.as.tokenForms[0]
		if f.Get("resource") != e.rs.URL() || f.Get("scope") != "mcp:a mcp:b" || f.Has("client_secret") || f.Has("client_id") {
			t.Errorf("token form %v", f)
		}
		if e.as.authorizations() != 0 {
			t.Error("the authorization endpoint was used")
		}
		if tok := e.tr.Token(e.rs.URL()); tok == nil || tok.Scope != "mcp:a mcp:b" || tok.TokenType != "Bearer" {
			t.Errorf("token %+v", tok)
		}
	})
	t.Run("private_key_jwt", func(t *testing.T) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		der, _ := x509.MarshalPKCS8PrivateKey(key)
		signer, err := ParsePrivateKeyPEM(pemOf(t, "PRIVATE KEY", der))
		if err != nil {
			t.Fatal(err)
		}
		var seen []map[string]any
		var issuer string
		e := newEnv(t, func(a *fakeAS) {
			a.prefix = "/tenant"
			a.noPKCE = true // not needed without the code flow
			a.methods = []string{"private_key_jwt"}
			a.grantCheck = func(r *http.Request, f url.Values) string {
				if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || r.Header.Get("Authorization") != "" {
					return "invalid_client"
				}
				_, c, err := verifyJWT(&key.PublicKey, f.Get("client_assertion"))
				if err != nil {
					return "invalid_client"
				}
				seen = append(seen, c)
				return ""
			}
		}, nil, func(tr *Transport) {
			tr.Grant = &ClientCredentials{}
			tr.Client = &ClientInfo{ClientID: "cc", PrivateKey: signer, SigningAlg: "ES256"}
		})
		issuer = e.as.Issuer()
		mustOK(t, e, "x")
		e.as.revokeAll() // a second grant: a new assertion
		mustOK(t, e, "y")
		if len(seen) != 2 {
			t.Fatalf("%d assertions", len(seen))
		}
		c := seen[0]
		exp, _ := c["exp"].(float64)
		if c["iss"] != "cc" || c["sub"] != "cc" || c["aud"] != issuer || c["jti"] == nil || c["jti"] == seen[1]["jti"] ||
			time.Until(time.Unix(int64(exp), 0)) <= 0 {
			t.Errorf("assertion claims %v / %v", c, seen[1])
		}
	})
	t.Run("private key restored after a serializing store", func(t *testing.T) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		assertions := 0
		e := newEnv(t, func(a *fakeAS) {
			a.grantCheck = func(r *http.Request, f url.Values) string {
				if _, _, err := verifyJWT(&key.PublicKey, f.Get("client_assertion")); err != nil {
					return "invalid_client"
				}
				assertions++
				return ""
			}
		}, nil, func(tr *Transport) {
			tr.Grant = ClientCredentials{}
			tr.Client = &ClientInfo{ClientID: "cc", PrivateKey: key}
			tr.Store = &jsonStore{}
		})
		mustOK(t, e, "x")
		e.as.revokeAll()
		mustOK(t, e, "y") // the stored registration has no key
		if assertions != 2 {
			t.Errorf("%d assertions", assertions)
		}
	})
	t.Run("refused", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) {
			a.grantCheck = func(*http.Request, url.Values) string { return "invalid_client" }
		}, nil, func(tr *Transport) {
			tr.Grant = ClientCredentials{}
			tr.Client = &ClientInfo{ClientID: "cc", ClientSecret: "bad"}
		})
		_, err := e.post("x")
		var te *TokenError
		if !errors.As(err, &te) || te.Code != "invalid_client" || te.StatusCode != 401 {
			t.Fatalf("err %v", err)
		}
		if n := e.as.tokenRequests(); n != 1 {
			t.Errorf("%d token requests, want 1 (no retry)", n)
		}
	})
}

func TestJWTBearerWorkloadIdentity(t *testing.T) {
	e := newEnv(t, func(a *fakeAS) {
		a.noDCR = true
		a.methods = []string{"none"}
		a.grantCheck = func(r *http.Request, f url.Values) string {
			if f.Get("assertion") != "workload.jwt.here" {
				return "invalid_grant"
			}
			if f.Get("client_id") != "wl" || r.Header.Get("Authorization") != "" {
				return "invalid_client"
			}
			return ""
		}
	}, nil, func(tr *Transport) {
		tr.Authorize = nil
		tr.Grant = &JWTBearer{Assertion: StaticAssertion("workload.jwt.here")}
		tr.Client = &ClientInfo{ClientID: "wl"}
	})
	mustOK(t, e, "x")
	if f := e.as.tokenForms[0]; f.Get("grant_type") != GrantTypeJWTBearer || f.Get("resource") != e.rs.URL() {
		t.Errorf("form %v", f)
	}

	t.Run("expired assertion is not retried", func(t *testing.T) {
		e := newEnv(t, func(a *fakeAS) {
			a.grantCheck = func(*http.Request, url.Values) string { return "invalid_grant" }
		}, nil, func(tr *Transport) {
			tr.Grant = &JWTBearer{Assertion: StaticAssertion("expired")}
			tr.Client = &ClientInfo{ClientID: "wl"}
		})
		_, err := e.post("x")
		var te *TokenError
		if !errors.As(err, &te) || te.Code != "invalid_grant" {
			t.Fatalf("err %v", err)
		}
		if n := e.as.tokenRequests(); n != 1 {
			t.Errorf("%d token requests, want 1", n)
		}
	})
}

// fakeIdP is an enterprise IdP's token endpoint doing RFC 8693 exchanges.
type fakeIdP struct {
	srv   *httptest.Server
	mu    sync.Mutex
	forms []url.Values
}

func newFakeIdP(t *testing.T) *fakeIdP {
	p := &fakeIdP{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f := r.PostForm
		p.mu.Lock()
		p.forms = append(p.forms, f)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if f.Get("grant_type") != GrantTypeTokenExchange || f.Get("subject_token") != "id-token" ||
			f.Get("subject_token_type") != TokenTypeIDToken || f.Get("requested_token_type") != TokenTypeIDJAG {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_request"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{
			"access_token":      "jag:" + f.Get("audience") + "|" + f.Get("resource"),
			"issued_token_type": TokenTypeIDJAG,
			"token_type":        "N_A",
		})
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func TestEnterpriseManagedAuthorization(t *testing.T) {
	idp := newFakeIdP(t)
	var e *env
	e = newEnv(t, func(a *fakeAS) {
		a.methods = []string{"client_secret_basic"}
		a.grantCheck = func(r *http.Request, f url.Values) string {
			if id, sec, _ := r.BasicAuth(); id != "mcp-client" || sec != "sec" {
				return "invalid_client"
			}
			if f.Get("assertion") != "jag:"+e.as.Issuer()+"|"+e.rs.URL() {
				return "invalid_grant"
			}
			return ""
		}
	}, nil, func(tr *Transport) {
		tr.Authorize = nil
		tr.Client = &ClientInfo{ClientID: "mcp-client", ClientSecret: "sec"}
		x := &IDJAGExchange{TokenEndpoint: idp.srv.URL + "/token", ClientID: "idp-client", IDToken: "id-token"}
		tr.Grant = &JWTBearer{Assertion: x.Assertion}
	})
	mustOK(t, e, "x")
	if len(idp.forms) != 1 || idp.forms[0].Get("client_id") != "idp-client" {
		t.Fatalf("IdP forms %v", idp.forms)
	}
	if f := e.as.tokenForms[0]; f.Get("grant_type") != GrantTypeJWTBearer {
		t.Errorf("AS form %v", f)
	}

	t.Run("IdP refusal", func(t *testing.T) {
		x := &IDJAGExchange{TokenEndpoint: idp.srv.URL + "/token", IDToken: "wrong"}
		_, err := x.Assertion(context.Background(), &GrantRequest{Issuer: "https://as", Resource: "https://rs/mcp"})
		var te *TokenError
		if !errors.As(err, &te) || te.Code != "invalid_request" {
			t.Fatalf("err %v", err)
		}
	})
}

func TestDPoP(t *testing.T) {
	for _, nonces := range []bool{false, true} {
		t.Run(fmt.Sprintf("nonces=%v", nonces), func(t *testing.T) {
			key, err := NewDPoPKey()
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, func(a *fakeAS) {
				a.dpop = true
				if nonces {
					a.asNonce = "as-nonce"
				}
			}, func(s *fakeRS) {
				s.dpopScheme = true
				if nonces {
					s.rsNonce = "rs-nonce"
				}
			}, func(tr *Transport) { tr.DPoP = key })
			mustOK(t, e, "one")
			mustOK(t, e, "two")
			tok := e.tr.Token(e.rs.URL())
			if tok == nil || tok.TokenType != "DPoP" || e.as.boundTo(tok.AccessToken) != key.Thumbprint() {
				t.Fatalf("token %+v", tok)
			}
			e.rs.mu.Lock()
			defer e.rs.mu.Unlock()
			if len(e.rs.dpopErrors) > 0 {
				t.Errorf("proof problems: %v", e.rs.dpopErrors)
			}
			// one proof per body, plus the retry of the first after the
			// nonce challenge (the nonce is kept for the second)
			want := 2
			if nonces {
				want = 3
			}
			if len(e.rs.jtis) != want {
				t.Errorf("%d valid proofs at the resource, want %d (schemes %v)", len(e.rs.jtis), want, e.rs.schemes)
			}
			for _, s := range e.rs.schemes[1:] {
				if s != "DPoP" {
					t.Errorf("schemes %v", e.rs.schemes)
				}
			}
			wantProofs := 1
			if nonces {
				wantProofs = 2
			}
			if len(e.as.dpopProofs) != wantProofs {
				t.Errorf("%d token requests with proofs, want %d", len(e.as.dpopProofs), wantProofs)
			}
		})
	}
	t.Run("no ES256 at the AS: Bearer", func(t *testing.T) {
		key, _ := NewDPoPKey()
		tr := &Transport{DPoP: key}
		if tr.dpopFor(&ServerMetadata{DPoPSigningAlgValuesSupported: []string{"RS256"}}) != nil {
			t.Error("proof for an AS without ES256")
		}
		if tr.dpopFor(&ServerMetadata{}) == nil {
			t.Error("no proof for an AS without the field")
		}
	})
	t.Run("proof", func(t *testing.T) {
		key, _ := NewDPoPKey()
		p, err := key.Proof("GET", "https://RS.example:443/mcp?x=1#f", "tok")
		if err != nil {
			t.Fatal(err)
		}
		_, c, jkt, err := verifyDPoPProof(p)
		if err != nil {
			t.Fatal(err)
		}
		if c["htm"] != "GET" || c["htu"] != "https://RS.example:443/mcp" || c["ath"] != s256("tok") || c["nonce"] != nil || jkt != key.Thumbprint() {
			t.Errorf("claims %v jkt %s", c, jkt)
		}
	})
}

// jsonStore is a Store that keeps registrations as JSON, as a persistent
// store does.
type jsonStore struct {
	MemoryStore
	mu      sync.Mutex
	clients map[string][]byte
}

func (s *jsonStore) Client(_ context.Context, issuer string) (*ClientInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.clients[issuer]
	if !ok {
		return nil, nil
	}
	var c ClientInfo
	return &c, json.Unmarshal(b, &c)
}

func (s *jsonStore) SetClient(_ context.Context, issuer string, c *ClientInfo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := json.Marshal(c)
	if s.clients == nil {
		s.clients = map[string][]byte{}
	}
	s.clients[issuer] = b
	return err
}

func TestDPoPChallenges(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Bearer resource_metadata="https://rs/prm", DPoP error="use_dpop_nonce", algs="ES256"`)
	if ch := oauthChallenge(h); ch["resource_metadata"] != "https://rs/prm" {
		t.Errorf("challenge %v", ch)
	}
	if !wantsDPoPNonce(h) {
		t.Error("nonce challenge not seen")
	}
	h = http.Header{"Www-Authenticate": {`DPoP resource_metadata="https://rs/prm"`}}
	if ch := oauthChallenge(h); ch["resource_metadata"] != "https://rs/prm" || wantsDPoPNonce(h) {
		t.Errorf("DPoP-only challenge %v", ch)
	}
	if oauthChallenge(http.Header{"Www-Authenticate": {`Basic realm="x"`}}) != nil {
		t.Error("Basic taken for OAuth")
	}
}
