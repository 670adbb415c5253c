package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTokenExchange: the form RFC 8693 asks for, client_secret_basic,
// the answer's fields; a refusal is a *TokenError with the server's code;
// a redirect is refused and not followed; a plain-http endpoint off
// loopback is refused before anything is sent.
func TestTokenExchange(t *testing.T) {
	redirected := false
	mux := http.NewServeMux()
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		user, pass, _ := r.BasicAuth()
		f := r.PostForm
		got := fmt.Sprint(f.Get("grant_type"), f.Get("subject_token"), f.Get("subject_token_type"), f.Get("requested_token_type"),
			f.Get("audience"), f.Get("resource"), f.Get("scope"), f.Has("client_id"), user, pass)
		want := fmt.Sprint(GrantTypeTokenExchange, f.Get("subject_token"), TokenTypeAccessToken, TokenTypeAccessToken, "https://up.example", "https://up.example/mcp", "a b", false, "gw", "s3")
		if sub := f.Get("subject_token"); got != want || (sub != "sub" && sub != "bad") {
			t.Errorf("form %s\nwant %s", got, want)
		}
		if f.Get("subject_token") == "bad" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"expired"}`)
			return
		}
		fmt.Fprint(w, `{"access_token":"up-token","token_type":"Bearer","expires_in":60,"issued_token_type":"`+TokenTypeAccessToken+`","extra":1}`)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { redirected = true })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	x := TokenExchange{TokenEndpoint: srv.URL + "/token", ClientID: "gw", ClientSecret: "s3", SubjectToken: "sub",
		RequestedTokenType: TokenTypeAccessToken, Audience: "https://up.example", Resource: "https://up.example/mcp", Scope: "a b"}
	ctx := context.Background()
	tok, err := x.Exchange(ctx)
	if err != nil || *tok != (ExchangedToken{AccessToken: "up-token", IssuedTokenType: TokenTypeAccessToken, TokenType: "Bearer", ExpiresIn: time.Minute}) {
		t.Fatalf("Exchange: %+v, %v", tok, err)
	}
	bad := x
	bad.SubjectToken = "bad"
	var te *TokenError
	if _, err := bad.Exchange(ctx); !errors.As(err, &te) || te.StatusCode != http.StatusBadRequest || te.Code != "invalid_grant" || te.Description != "expired" {
		t.Errorf("refusal: %v", err)
	}
	moved := x
	moved.TokenEndpoint = srv.URL + "/moved"
	var re *RedirectError
	if _, err := moved.Exchange(ctx); !errors.As(err, &re) || redirected {
		t.Errorf("redirect: %v (followed: %v)", err, redirected)
	}
	insecure := x
	insecure.TokenEndpoint = "http://as.example/token"
	var ie *InsecureURLError
	if _, err := insecure.Exchange(ctx); !errors.As(err, &ie) {
		t.Errorf("plain http off loopback: %v", err)
	}
}
