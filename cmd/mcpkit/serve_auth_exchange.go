package main

import (
	"crypto/rand"
	"net/http"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mcpkit/mcpkit/auth/oauth"
)

// otherGrant serves the client credentials grant (RFC 6749 §4.4: a token
// whose subject is the client, with the scopes asked for) and the token
// exchange (RFC 8693: a token of the demo's exchanged for one of the same
// subject for another resource, with at most the subject token's scopes
// and an act claim naming the exchanging client). JWT tokens only, and
// no DPoP binding. It reports whether the grant was one of these.
func (a *demoAS) otherGrant(w http.ResponseWriter, r *http.Request, client string) bool {
	grant := r.PostForm.Get("grant_type")
	if grant != oauth.GrantTypeClientCredentials && grant != oauth.GrantTypeTokenExchange {
		return false
	}
	if a.cfg.tokens != tokensJWT {
		writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type", "error_description": "JWT tokens only"})
		return true
	}
	if client == "" {
		writeJSONResponse(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
		return true
	}
	resource := r.PostForm.Get("resource")
	if resource == "" {
		resource = r.PostForm.Get("audience")
	}
	if resource == "" {
		writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "invalid_target", "error_description": "resource or audience required"})
		return true
	}
	asked := strings.Fields(r.PostForm.Get("scope"))
	now := time.Now()
	claims := map[string]any{"iss": a.issuer, "aud": resource, "client_id": client, "iat": now.Unix(),
		"exp": now.Add(demoTokenLifetime).Unix(), "jti": rand.Text()}
	if grant == oauth.GrantTypeClientCredentials {
		claims["sub"] = client
		if len(asked) > 0 {
			claims["scope"] = strings.Join(asked, " ")
		}
	} else {
		if r.PostForm.Get("subject_token_type") != oauth.TokenTypeAccessToken {
			writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "invalid_request", "error_description": "subject_token_type must be an access token"})
			return true
		}
		sub, held, exp, ok := a.subjectToken(r.PostForm.Get("subject_token"), now)
		if !ok {
			writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "the subject token is not a valid token of this server"})
			return true
		}
		granted := held
		if len(asked) > 0 {
			granted = nil
			for _, s := range asked {
				if slices.Contains(held, s) {
					granted = append(granted, s)
				}
			}
			if len(granted) == 0 {
				writeJSONResponse(w, http.StatusBadRequest, map[string]any{"error": "invalid_scope", "error_description": "the subject token holds none of the scopes asked for"})
				return true
			}
		}
		claims["sub"] = sub
		claims["act"] = map[string]any{"sub": client}
		if len(granted) > 0 {
			claims["scope"] = strings.Join(granted, " ")
		}
		claims["exp"] = min(exp.Unix(), now.Add(demoTokenLifetime).Unix())
	}
	tok, err := jwt.Signed(a.signer).Claims(claims).Serialize()
	if err != nil {
		writeJSONResponse(w, http.StatusInternalServerError, map[string]any{"error": "server_error"})
		return true
	}
	a.logf("issued a %s token to OAuth client %s for %s", grant, client, resource)
	ans := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": claims["exp"].(int64) - now.Unix()}
	if grant == oauth.GrantTypeTokenExchange {
		ans["issued_token_type"] = oauth.TokenTypeAccessToken
	}
	writeJSONResponse(w, http.StatusOK, ans)
	return true
}

// subjectToken checks a token the demo signed and returns its subject,
// scopes and expiry.
func (a *demoAS) subjectToken(tok string, now time.Time) (sub string, scopes []string, exp time.Time, ok bool) {
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return "", nil, time.Time{}, false
	}
	var std jwt.Claims
	var extra struct {
		Scope string         `json:"scope"`
		Cnf   map[string]any `json:"cnf"`
	}
	if err := parsed.Claims(a.jwk.Key, &std, &extra); err != nil || extra.Cnf != nil {
		return "", nil, time.Time{}, false
	}
	if std.Validate(jwt.Expected{Issuer: a.issuer, Time: now}) != nil || std.Subject == "" || std.Expiry == nil {
		return "", nil, time.Time{}, false
	}
	return std.Subject, strings.Fields(extra.Scope), std.Expiry.Time(), true
}
