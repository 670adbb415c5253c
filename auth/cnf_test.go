package auth

import (
	"context"
	"errors"
	"testing"
)

// TestJWTConfirmation: a JWT's cnf.jkt becomes TokenInfo.JKT; a cnf
// binding the token by another method, or malformed, is refused.
func TestJWTConfirmation(t *testing.T) {
	key := newECKey(t, "k1")
	as := newTestAS(t, key)
	c := newClock()
	v := as.verifier(t, c, nil)
	ctx := context.Background()
	ti, err := v.Verify(ctx, key.sign(t, as.claims(c, map[string]any{"cnf": map[string]any{"jkt": "thumb"}})))
	if err != nil || ti.JKT != "thumb" {
		t.Fatalf("bound token: %+v, %v", ti, err)
	}
	ti, err = v.Verify(ctx, key.sign(t, as.claims(c, nil)))
	if err != nil || ti.JKT != "" {
		t.Fatalf("unbound token: %+v, %v", ti, err)
	}
	for name, cnf := range map[string]any{
		"mTLS only":    map[string]any{"x5t#S256": "abc"},
		"empty jkt":    map[string]any{"jkt": ""},
		"jkt a number": map[string]any{"jkt": 5},
		"not object":   "thumb",
	} {
		if _, err := v.Verify(ctx, key.sign(t, as.claims(c, map[string]any{"cnf": cnf}))); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: %v, want ErrInvalidToken", name, err)
		}
	}
}
