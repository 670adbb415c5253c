package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Grant types and token types of the extension grants.
const (
	GrantTypeClientCredentials = "client_credentials"
	GrantTypeJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	GrantTypeTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeIDToken           = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG             = "urn:ietf:params:oauth:token-type:id-jag"
	clientAssertionTypeJWT     = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// A Grant obtains access tokens without the user: when Transport.Grant is
// set, the Transport uses it instead of the authorization code flow. The
// Transport still discovers the authorization server, finds the client
// registration (Transport.Client first) and adds the RFC 8707 resource,
// the scope, the client authentication and any DPoP proof to the token
// request; the Grant supplies grant_type and the grant's own parameters.
// A token request the server refuses is not retried: the request to the
// MCP server fails with the *TokenError.
type Grant interface {
	TokenParams(ctx context.Context, r *GrantRequest) (url.Values, error)
}

// GrantRequest is what a Grant is told about the token request to make.
type GrantRequest struct {
	Issuer   string          // the authorization server's issuer identifier
	Metadata *ServerMetadata // its metadata
	Resource string          // the RFC 8707 resource indicator (the MCP server)
	Scope    string          // the scope requested ("" : none)
	Client   *ClientInfo     // the client registration used
	// HTTPClient is the client the Transport sends its own OAuth
	// requests with; it follows no redirect (a grant's requests carry
	// credentials), refusing them with a *RedirectError.
	HTTPClient *http.Client
}

// ClientCredentials is the client credentials grant (RFC 6749 §4.4): the
// client authenticates as itself (client_secret_basic, client_secret_post
// or private_key_jwt, see ClientInfo) with no user involved.
type ClientCredentials struct{}

// TokenParams implements Grant.
func (ClientCredentials) TokenParams(context.Context, *GrantRequest) (url.Values, error) {
	return url.Values{"grant_type": {GrantTypeClientCredentials}}, nil
}

// JWTBearer is the JWT bearer authorization grant (RFC 7523 §2.1): a JWT
// issued by someone the authorization server trusts (a workload identity
// provider, or an enterprise IdP's ID-JAG, see IDJAGExchange) is
// exchanged for an access token.
type JWTBearer struct {
	// Assertion returns the JWT to present.
	Assertion func(ctx context.Context, r *GrantRequest) (string, error)
}

// TokenParams implements Grant.
func (g *JWTBearer) TokenParams(ctx context.Context, r *GrantRequest) (url.Values, error) {
	if g.Assertion == nil {
		return nil, errors.New("oauth: JWTBearer without Assertion")
	}
	a, err := g.Assertion(ctx, r)
	if err != nil {
		return nil, err
	}
	if a == "" {
		return nil, errors.New("oauth: empty JWT bearer assertion")
	}
	return url.Values{"grant_type": {GrantTypeJWTBearer}, "assertion": {a}}, nil
}

// StaticAssertion returns a JWTBearer.Assertion that always presents jwt
// (a workload identity token read from the environment, say).
func StaticAssertion(jwt string) func(context.Context, *GrantRequest) (string, error) {
	return func(context.Context, *GrantRequest) (string, error) { return jwt, nil }
}

// IDJAGExchange obtains an Identity Assertion JWT Authorization Grant
// (ID-JAG) from an enterprise identity provider for enterprise-managed
// authorization (SEP-990): an RFC 8693 token exchange of the user's ID
// token at the IdP's token endpoint, for the authorization server (the
// audience) and the MCP server (the resource). Use its Assertion method
// as JWTBearer.Assertion:
//
//	x := &oauth.IDJAGExchange{TokenEndpoint: idpToken, ClientID: idpClient, IDToken: idToken}
//	t := &oauth.Transport{Client: mcpClient, Grant: &oauth.JWTBearer{Assertion: x.Assertion}}
type IDJAGExchange struct {
	// TokenEndpoint is the IdP's token endpoint.
	TokenEndpoint string
	// ClientID and ClientSecret are the client's credentials at the IdP;
	// with a secret they are sent with client_secret_basic, else the
	// client_id is sent in the form.
	ClientID     string
	ClientSecret string
	// IDToken is the user's ID token from the IdP, or SubjectToken
	// returns it (taking precedence).
	IDToken      string
	SubjectToken func(ctx context.Context) (string, error)
	// HTTPClient sends the exchange. Default GrantRequest.HTTPClient.
	// Whichever it is, the exchange follows no redirect (it carries the
	// ID token and the client's secret): a redirect is a *RedirectError.
	HTTPClient *http.Client
}

// Assertion runs the token exchange and returns the ID-JAG.
func (x *IDJAGExchange) Assertion(ctx context.Context, r *GrantRequest) (string, error) {
	subject := x.IDToken
	if x.SubjectToken != nil {
		s, err := x.SubjectToken(ctx)
		if err != nil {
			return "", err
		}
		subject = s
	}
	if subject == "" {
		return "", errors.New("oauth: IDJAGExchange without an ID token")
	}
	if x.TokenEndpoint == "" {
		return "", errors.New("oauth: IDJAGExchange without the IdP token endpoint")
	}
	hc := x.HTTPClient
	if hc == nil {
		hc = r.HTTPClient
	}
	t, err := (&TokenExchange{
		TokenEndpoint: x.TokenEndpoint, ClientID: x.ClientID, ClientSecret: x.ClientSecret,
		SubjectToken: subject, SubjectTokenType: TokenTypeIDToken, RequestedTokenType: TokenTypeIDJAG,
		Audience: r.Issuer, Resource: r.Resource, Scope: r.Scope, HTTPClient: hc,
	}).Exchange(ctx)
	if te := (*TokenError)(nil); errors.As(err, &te) {
		te.Description = "identity provider token exchange: " + te.Description
		return "", te
	}
	if err != nil {
		return "", err
	}
	if t.IssuedTokenType != "" && t.IssuedTokenType != TokenTypeIDJAG {
		return "", &TokenError{StatusCode: http.StatusOK, Description: fmt.Sprintf("identity provider token exchange issued %s, not an ID-JAG", t.IssuedTokenType)}
	}
	return t.AccessToken, nil
}
