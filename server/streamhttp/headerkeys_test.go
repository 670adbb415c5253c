package streamhttp

import (
	"net/http"
	"testing"
)

// TestHeaderKeysCanonical: the header names looked up directly in the
// map (headerValue) are in canonical form.
func TestHeaderKeysCanonical(t *testing.T) {
	for _, k := range []string{headerSessionID, headerProtocolVersion, headerLastEventID, headerMethod, headerName, "Content-Type", "Sec-Fetch-Site", "Origin", "Accept"} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("%q is not canonical (%q)", k, c)
		}
	}
}
