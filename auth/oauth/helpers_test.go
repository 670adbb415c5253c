package oauth

import (
	"crypto/sha256"
	"encoding/base64"
)

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }
func b64(b []byte) string         { return base64.RawURLEncoding.EncodeToString(b) }
