package oauth

import (
	"context"
	"crypto"
	"sync"
	"time"
)

// ClientInfo is an OAuth client registration at one authorization server.
type ClientInfo struct {
	// Issuer is the authorization server's issuer identifier the
	// registration belongs to. Pre-registered credentials with an empty
	// Issuer are bound to the first authorization server they are used
	// with, and never presented to another.
	Issuer       string `json:"issuer,omitempty"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint authentication method
	// (client_secret_basic, client_secret_post, private_key_jwt or none);
	// empty chooses one: private_key_jwt with a PrivateKey, none without
	// a secret, else a secret method the server's metadata lists.
	AuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// PrivateKey signs the client assertions of private_key_jwt
	// (RFC 7523 §2.2; see ParsePrivateKeyPEM). It is not serialized: a
	// Store that persists registrations loses it, and the Transport
	// takes it again from Transport.Client when the client IDs match.
	PrivateKey crypto.Signer `json:"-"`
	// SigningAlg is the JWS algorithm of the client assertions (ES256,
	// RS256, ...); empty: the key's own (ES256 for P-256, RS256 for RSA).
	SigningAlg string `json:"token_endpoint_auth_signing_alg,omitempty"`
	// SecretExpiresAt is when ClientSecret expires (zero: never).
	SecretExpiresAt time.Time `json:"client_secret_expires_at,omitzero"`
}

// Token is an access token (and refresh token) issued for one resource by
// one authorization server.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scope is the space-separated scope granted (or, when the server did
	// not say, requested).
	Scope string `json:"scope,omitempty"`
}

// expired reports whether the token is past its expiry (with a margin).
func (t *Token) expired(now time.Time) bool {
	return !t.Expiry.IsZero() && now.Add(10*time.Second).After(t.Expiry)
}

// Store keeps client registrations and tokens, keyed by the issuer of the
// authorization server that made them (and, for tokens, the resource they
// are for). Implementations must be safe for concurrent use; a missing
// entry is (nil, nil).
type Store interface {
	Client(ctx context.Context, issuer string) (*ClientInfo, error)
	SetClient(ctx context.Context, issuer string, c *ClientInfo) error
	Token(ctx context.Context, issuer, resource string) (*Token, error)
	// SetToken stores t; a nil t deletes the entry.
	SetToken(ctx context.Context, issuer, resource string, t *Token) error
}

// MemoryStore is an in-memory Store. The zero value is ready to use.
type MemoryStore struct {
	mu      sync.Mutex
	clients map[string]ClientInfo
	tokens  map[[2]string]Token
}

var _ Store = (*MemoryStore)(nil)

// Client implements Store.
func (s *MemoryStore) Client(_ context.Context, issuer string) (*ClientInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[issuer]
	if !ok {
		return nil, nil
	}
	return &c, nil
}

// SetClient implements Store.
func (s *MemoryStore) SetClient(_ context.Context, issuer string, c *ClientInfo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients == nil {
		s.clients = map[string]ClientInfo{}
	}
	if c == nil {
		delete(s.clients, issuer)
		return nil
	}
	s.clients[issuer] = *c
	return nil
}

// Token implements Store.
func (s *MemoryStore) Token(_ context.Context, issuer, resource string) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[[2]string{issuer, resource}]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

// SetToken implements Store.
func (s *MemoryStore) SetToken(_ context.Context, issuer, resource string, t *Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens == nil {
		s.tokens = map[[2]string]Token{}
	}
	k := [2]string{issuer, resource}
	if t == nil {
		delete(s.tokens, k)
		return nil
	}
	s.tokens[k] = *t
	return nil
}
