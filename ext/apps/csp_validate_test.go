package apps_test

import (
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/ext/apps"
)

// TestCSPValidate: Validate, which hosts may call on a server's CSP,
// accepts nil and origins, and names the first bad entry.
func TestCSPValidate(t *testing.T) {
	if err := (*apps.CSP)(nil).Validate(); err != nil {
		t.Errorf("nil CSP: %v", err)
	}
	if err := (&apps.CSP{ResourceDomains: []string{"https://*.example.com"}}).Validate(); err != nil {
		t.Errorf("subdomain wildcard: %v", err)
	}
	err := (&apps.CSP{ConnectDomains: []string{"https://a.example.com"}, BaseURIDomains: []string{"https://b.example.com", "data:"}}).Validate()
	if err == nil || !strings.HasPrefix(err.Error(), `CSP.BaseURIDomains[1] "data:": `) {
		t.Errorf("error %v, want it to name CSP.BaseURIDomains[1] \"data:\"", err)
	}
}
