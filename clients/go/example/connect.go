package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"shomei.dev/clients/go/protocodec"
)

// dial opens a gRPC connection to the server named by an http:// or https:// URL.
//
// http:// is gRPC over cleartext HTTP/2 with prior knowledge, which the server
// speaks on its one port next to HTTP/1.1; https:// is gRPC over TLS (system
// roots). The token goes in "Authorization: Bearer <token>" on every call, or
// as "DPoP <token>" with a proof when the access token is DPoP-bound.
func dial(common commonFlags) (*grpc.ClientConn, error) {
	server, err := url.Parse(common.server)
	if err != nil || server.Host == "" {
		return nil, usageError{fmt.Errorf("-server %q: want a URL such as http://localhost:8080", common.server)}
	}
	options := []grpc.DialOption{protocodec.DialOption()}
	switch server.Scheme {
	case "http":
		// WithInsecure rather than insecure.NewCredentials(): the latter needs grpc-go 1.34.
		options = append(options, grpc.WithInsecure())
	case "https":
		options = append(options, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})))
	default:
		return nil, usageError{fmt.Errorf("-server %q: the scheme must be http or https", common.server)}
	}
	if common.dpopKey != "" {
		signer, err := loadDpopSigner(common.dpopKey, common.server, common.token)
		if err != nil {
			return nil, err
		}
		options = append(options, grpc.WithUnaryInterceptor(signer.interceptor()))
	} else if common.token != "" {
		options = append(options, grpc.WithPerRPCCredentials(bearerToken{token: common.token, tls: server.Scheme == "https"}))
	}
	return grpc.Dial(hostPort(server), options...)
}

// hostPort is the dial target: the URL's host, with the scheme's default port when it names none.
func hostPort(server *url.URL) string {
	if server.Port() != "" {
		return server.Host
	}
	if server.Scheme == "https" {
		return server.Host + ":443"
	}
	return server.Host + ":80"
}

// bearerToken sends an API token as gRPC metadata, which the server reads as
// the Authorization header.
type bearerToken struct {
	token string
	tls   bool
}

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false for http:// only, so that a token given
// with an https:// URL is never sent in the clear.
func (b bearerToken) RequireTransportSecurity() bool { return b.tls }
