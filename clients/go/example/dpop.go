package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// dpopSigner makes the DPoP proofs (RFC 9449) of a DPoP-bound OAuth access
// token: one per call, signed with the client's P-256 key (ES256), naming the
// call's URL (the server URL followed by the gRPC method path) and hashing the
// token (ath).
type dpopSigner struct {
	key    *ecdsa.PrivateKey
	jwk    map[string]string
	server string
	token  string
}

// loadDpopSigner reads a P-256 private key in PEM (PKCS #8 or SEC 1).
func loadDpopSigner(file, server, token string) (*dpopSigner, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usageError{fmt.Errorf("-dpop-key: %v", err)}
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, usageError{fmt.Errorf("-dpop-key %s: no PEM block", file)}
	}
	var key *ecdsa.PrivateKey
	if parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		key, _ = parsed.(*ecdsa.PrivateKey)
	} else if parsed, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		key = parsed
	}
	if key == nil || key.Curve != elliptic.P256() {
		return nil, usageError{fmt.Errorf("-dpop-key %s: want a P-256 private key", file)}
	}
	jwk := map[string]string{
		"kty": "EC",
		"crv": "P-256",
		"x":   b64(key.X.FillBytes(make([]byte, 32))),
		"y":   b64(key.Y.FillBytes(make([]byte, 32))),
	}
	return &dpopSigner{key: key, jwk: jwk, server: strings.TrimRight(server, "/"), token: token}, nil
}

func b64(data []byte) string { return base64.RawURLEncoding.EncodeToString(data) }

// proof is a DPoP proof JWT for a POST to the method's URL.
func (d *dpopSigner) proof(method string) (string, error) {
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	ath := sha256.Sum256([]byte(d.token))
	header, err := json.Marshal(map[string]interface{}{"typ": "dpop+jwt", "alg": "ES256", "jwk": d.jwk})
	if err != nil {
		return "", err
	}
	claims, err := json.Marshal(map[string]interface{}{
		"jti": hex.EncodeToString(jti),
		"htm": "POST",
		"htu": d.server + method,
		"iat": time.Now().Unix(),
		"ath": b64(ath[:]),
	})
	if err != nil {
		return "", err
	}
	input := b64(header) + "." + b64(claims)
	digest := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, d.key, digest[:])
	if err != nil {
		return "", err
	}
	// JWS ES256 signatures are r and s, 32 bytes each (RFC 7518 section 3.4).
	signature := append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	return input + "." + b64(signature), nil
}

// interceptor sends "Authorization: DPoP <token>" and a new proof with every call.
func (d *dpopSigner) interceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		proof, err := d.proof(method)
		if err != nil {
			return err
		}
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "DPoP "+d.token, "dpop", proof)
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
