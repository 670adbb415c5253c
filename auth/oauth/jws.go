package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
)

// ParsePrivateKeyPEM parses a PEM-encoded private key (PKCS #8, SEC 1 "EC
// PRIVATE KEY" or PKCS #1 "RSA PRIVATE KEY") for private_key_jwt client
// authentication (ClientInfo.PrivateKey). Only ECDSA and RSA keys are
// accepted.
func ParsePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("oauth: no PEM block in the private key")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: private key: %w", err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("oauth: unsupported private key type %T (want ECDSA or RSA)", key)
}

// jwsAlg returns the JWS algorithm to sign with key: want when given and
// usable with the key, else the key's natural one (ES256/ES384/ES512 by
// curve, RS256 for RSA).
func jwsAlg(key crypto.Signer, want string) (string, error) {
	var natural string
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			natural = "ES256"
		case elliptic.P384():
			natural = "ES384"
		case elliptic.P521():
			natural = "ES512"
		default:
			return "", errors.New("oauth: unsupported elliptic curve")
		}
		if want != "" && want != natural {
			return "", fmt.Errorf("oauth: signing algorithm %s does not fit the %s key", want, natural)
		}
	case *rsa.PublicKey:
		natural = "RS256"
		switch want {
		case "", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		default:
			return "", fmt.Errorf("oauth: signing algorithm %s does not fit an RSA key", want)
		}
	default:
		return "", fmt.Errorf("oauth: unsupported key type %T", k)
	}
	if want != "" {
		return want, nil
	}
	return natural, nil
}

// signJWT returns the compact JWS of claims with the given header (alg is
// set by signJWT), signed with key under alg.
func signJWT(key crypto.Signer, alg string, header, claims map[string]any) (string, error) {
	h := map[string]any{"alg": alg}
	for k, v := range header {
		h[k] = v
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb)
	var hash crypto.Hash
	switch alg[2:] {
	case "256":
		hash = crypto.SHA256
	case "384":
		hash = crypto.SHA384
	case "512":
		hash = crypto.SHA512
	default:
		return "", fmt.Errorf("oauth: unsupported algorithm %s", alg)
	}
	var digest []byte
	switch hash {
	case crypto.SHA256:
		s := sha256.Sum256([]byte(input))
		digest = s[:]
	case crypto.SHA384:
		s := sha512.Sum384([]byte(input))
		digest = s[:]
	default:
		s := sha512.Sum512([]byte(input))
		digest = s[:]
	}
	var opts crypto.SignerOpts = hash
	if alg[:2] == "PS" {
		opts = &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: hash}
	}
	sig, err := key.Sign(rand.Reader, digest, opts)
	if err != nil {
		return "", err
	}
	if alg[:2] == "ES" {
		// JWS wants R || S, each the size of the curve order (RFC 7518 §3.4).
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &rs); err != nil {
			return "", fmt.Errorf("oauth: ECDSA signature: %w", err)
		}
		n := (key.Public().(*ecdsa.PublicKey).Curve.Params().BitSize + 7) / 8
		raw := make([]byte, 2*n)
		rs.R.FillBytes(raw[:n])
		rs.S.FillBytes(raw[n:])
		sig = raw
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// ecPublicJWK returns the public JWK of an ECDSA key, members in the
// lexicographic order of RFC 7638 (so that its JSON is also the input of
// the thumbprint).
func ecPublicJWK(pub *ecdsa.PublicKey) (map[string]any, error) {
	b, err := pub.Bytes() // 0x04 || X || Y
	if err != nil {
		return nil, err
	}
	n := (len(b) - 1) / 2
	return map[string]any{
		"crv": pub.Curve.Params().Name,
		"kty": "EC",
		"x":   base64.RawURLEncoding.EncodeToString(b[1 : 1+n]),
		"y":   base64.RawURLEncoding.EncodeToString(b[1+n:]),
	}, nil
}

// jwkThumbprint is the RFC 7638 SHA-256 thumbprint of an EC public JWK
// built by ecPublicJWK.
func jwkThumbprint(jwk map[string]any) string {
	// encoding/json sorts map keys, which is the order RFC 7638 requires;
	// the members are exactly the required ones.
	b, _ := json.Marshal(jwk)
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
