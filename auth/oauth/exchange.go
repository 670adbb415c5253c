package oauth

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// TokenTypeAccessToken is RFC 8693's token type of an OAuth access token.
const TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"

// maxExchangeBytes bounds a token endpoint's answer to an exchange.
const maxExchangeBytes = 64 << 10

// TokenExchange is one RFC 8693 token exchange at a token endpoint: a
// subject token presented for a token of another audience or type. It is
// what IDJAGExchange (an ID token for an ID-JAG) and a gateway acting for
// its callers (an access token for one of its upstream) each send. The
// exchange follows no redirect, since it carries the subject token and
// the client's secret: a redirect is a *RedirectError.
type TokenExchange struct {
	// TokenEndpoint is an https URL (http only on a loopback host).
	TokenEndpoint string
	// ClientID and ClientSecret authenticate the client: with a secret,
	// client_secret_basic; without, client_id in the form (if set).
	ClientID     string
	ClientSecret string
	// SubjectToken and SubjectTokenType are the token presented and its
	// type (default TokenTypeAccessToken).
	SubjectToken     string
	SubjectTokenType string
	// RequestedTokenType, Audience, Resource and Scope (space-separated)
	// are sent when set.
	RequestedTokenType string
	Audience           string
	Resource           string
	Scope              string
	// HTTPClient sends the request; nil uses http.DefaultClient's
	// transport.
	HTTPClient *http.Client
}

// ExchangedToken is the answer to a TokenExchange.
type ExchangedToken struct {
	AccessToken     string
	IssuedTokenType string        // "" when the answer names none
	TokenType       string        // "Bearer", "N_A", …
	ExpiresIn       time.Duration // 0 when the answer gives none
}

// Exchange sends the exchange. A refusal, or an answer without an
// access_token, is a *TokenError; an endpoint that is not https (or
// loopback http) an *InsecureURLError; a redirect a *RedirectError; any
// other error is the request's.
func (x *TokenExchange) Exchange(ctx context.Context) (*ExchangedToken, error) {
	if _, err := checkURL("token exchange endpoint", x.TokenEndpoint); err != nil {
		return nil, err
	}
	typ := x.SubjectTokenType
	if typ == "" {
		typ = TokenTypeAccessToken
	}
	form := url.Values{
		"grant_type":         {GrantTypeTokenExchange},
		"subject_token":      {x.SubjectToken},
		"subject_token_type": {typ},
	}
	for k, v := range map[string]string{"requested_token_type": x.RequestedTokenType, "audience": x.Audience, "resource": x.Resource, "scope": x.Scope} {
		if v != "" {
			form.Set(k, v)
		}
	}
	if x.ClientSecret == "" && x.ClientID != "" {
		form.Set("client_id", x.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if x.ClientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(x.ClientID), url.QueryEscape(x.ClientSecret))
	}
	resp, err := send(x.HTTPClient, req, "token exchange endpoint", followNone)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxExchangeBytes))
	if err != nil {
		return nil, err
	}
	var v struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
		TokenType       string `json:"token_type"`
		ExpiresIn       int64  `json:"expires_in"`
		Error           string `json:"error"`
		Description     string `json:"error_description"`
	}
	jerr := json.Unmarshal(body, &v)
	if resp.StatusCode != http.StatusOK {
		return nil, &TokenError{StatusCode: resp.StatusCode, Code: v.Error, Description: v.Description}
	}
	if jerr != nil || v.AccessToken == "" {
		return nil, &TokenError{StatusCode: resp.StatusCode, Description: "no access_token in the token exchange's answer"}
	}
	t := &ExchangedToken{AccessToken: v.AccessToken, IssuedTokenType: v.IssuedTokenType, TokenType: v.TokenType}
	if v.ExpiresIn > 0 {
		t.ExpiresIn = time.Duration(v.ExpiresIn) * time.Second
	}
	return t, nil
}
