package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// TokenInfo is what a Verifier learned from a valid access token.
type TokenInfo struct {
	// Subject is the token's sub: the principal it was issued for.
	Subject string
	// Scopes are the scopes granted (scope or scp claim).
	Scopes []string
	// Expiration is when the token expires; zero means unknown, and the
	// middleware then does not check it.
	Expiration time.Time
	// Audience lists the token's aud values.
	Audience []string
	// Issuer is the token's iss: the authorization server.
	Issuer string
	// JKT is the cnf.jkt of a DPoP-bound token (RFC 9449 §6): the
	// RFC 7638 thumbprint of the key whose proofs must come with it.
	// Empty for a bearer token. Require refuses a bound token used
	// without its proof, or as a bearer token.
	JKT string
	// Extra holds the other claims (client_id, azp, jti, cnf, …).
	Extra map[string]any
}

// Principal is the default principal name of a token: the issuer and
// the subject separated by one space (an issuer is a URL and holds no
// space), or the subject alone when the issuer is empty. Subjects are
// unique only per issuer, so both are part of the name.
func (ti *TokenInfo) Principal() string {
	if ti.Issuer == "" {
		return ti.Subject
	}
	return ti.Issuer + " " + ti.Subject
}

// HasScope reports whether the token grants scope.
func (ti *TokenInfo) HasScope(scope string) bool {
	return slices.Contains(ti.Scopes, scope)
}

// A Verifier checks a bearer access token and returns what it grants.
//
// Implementations MUST check the token's integrity, its expiry and that
// it was issued for this resource server (RFC 8707 audience; MCP authorization:
// tokens for other audiences are rejected). A token bound to a key
// (RFC 9449 §6: cnf.jkt) MUST come back with TokenInfo.JKT set, or the
// middleware takes it for a bearer token; a token with any other cnf
// confirmation it cannot check MUST be refused. Errors are turned into a 401
// invalid_token challenge, except those wrapping ErrUnavailable (503).
// Errors must never contain the token.
type Verifier interface {
	Verify(ctx context.Context, token string) (*TokenInfo, error)
}

// VerifierFunc adapts a function to the Verifier interface.
type VerifierFunc func(ctx context.Context, token string) (*TokenInfo, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, token string) (*TokenInfo, error) {
	return f(ctx, token)
}

// confirmationJKT reads a token's cnf claim (RFC 7800): absent, or an
// object whose jkt (RFC 9449 §6.1) is the thumbprint returned. A cnf
// naming only other confirmation methods (an mTLS certificate, say) is
// refused: the token is bound to something this resource cannot check,
// and accepting it as a bearer token would undo the binding.
func confirmationJKT(cnf any) (string, error) {
	if cnf == nil {
		return "", nil
	}
	obj, ok := cnf.(map[string]any)
	if !ok {
		return "", fmt.Errorf("%w: cnf claim is not an object", ErrInvalidToken)
	}
	jkt, ok := obj["jkt"].(string)
	if !ok || jkt == "" {
		return "", fmt.Errorf("%w: cnf claim binds the token by a method other than DPoP (no jkt)", ErrInvalidToken)
	}
	return jkt, nil
}

var (
	// ErrInvalidToken is wrapped by the errors of a token that is not
	// valid for this resource (bad signature, expired, other audience…).
	ErrInvalidToken = errors.New("auth: invalid token")
	// ErrUnavailable is wrapped by verifier errors that say nothing about
	// the token: the keys or the authorization server could not be
	// reached. The middleware answers 503, not 401, so that clients do
	// not re-authorize in vain.
	ErrUnavailable = errors.New("auth: token verification unavailable")
)

type tokenInfoKey struct{}

// WithTokenInfo returns a context carrying ti (the middleware does this;
// it is exported for tests and for other transports).
func WithTokenInfo(ctx context.Context, ti *TokenInfo) context.Context {
	return context.WithValue(ctx, tokenInfoKey{}, ti)
}

// TokenInfoFrom returns the verified token of the request ctx belongs
// to, or nil when the request was not authenticated by Require.
func TokenInfoFrom(ctx context.Context) *TokenInfo {
	ti, _ := ctx.Value(tokenInfoKey{}).(*TokenInfo)
	return ti
}
