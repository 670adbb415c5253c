package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
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
// set by signJWT), signed with key under alg by go-jose. The header's
// members are written in lexicographic order and the claims are the JSON
// encoding of the map, so the JWS is what a hand-written encoder would
// give (TestSignJWTWire).
func signJWT(key crypto.Signer, alg string, header, claims map[string]any) (string, error) {
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	opts := &jose.SignerOptions{}
	for k, v := range header {
		opts.WithHeader(jose.HeaderKey(k), v)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: signingKey(key)}, opts)
	if err != nil {
		return "", fmt.Errorf("oauth: signing with %s: %w", alg, err)
	}
	jws, err := signer.Sign(cb)
	if err != nil {
		return "", fmt.Errorf("oauth: signing with %s: %w", alg, err)
	}
	return jws.CompactSerialize()
}

// signingKey is key as go-jose takes it: an ECDSA or RSA private key as
// itself, any other crypto.Signer (a key in a KMS, say) through an opaque
// signer.
func signingKey(key crypto.Signer) any {
	switch k := key.(type) {
	case *ecdsa.PrivateKey, *rsa.PrivateKey:
		return k
	}
	return opaqueSigner{OpaqueSigner: cryptosigner.Opaque(key), key: key}
}

// opaqueSigner is go-jose's adapter of a crypto.Signer, except for PS256,
// PS384 and PS512, where the adapter picks the longest salt: RFC 7518
// §3.5 wants a salt as long as the hash, which go-jose's own RSA signer
// and the verifiers that check the salt use.
type opaqueSigner struct {
	jose.OpaqueSigner
	key crypto.Signer
}

func (s opaqueSigner) SignPayload(payload []byte, alg jose.SignatureAlgorithm) ([]byte, error) {
	var hash crypto.Hash
	switch alg {
	case jose.PS256:
		hash = crypto.SHA256
	case jose.PS384:
		hash = crypto.SHA384
	case jose.PS512:
		hash = crypto.SHA512
	default:
		return s.OpaqueSigner.SignPayload(payload, alg)
	}
	h := hash.New()
	h.Write(payload)
	return s.key.Sign(rand.Reader, h.Sum(nil), &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: hash})
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
