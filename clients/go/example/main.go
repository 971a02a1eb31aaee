// Command example calls shomei's certificate status API over gRPC with an API
// token or an OAuth access token (Bearer, or DPoP-bound with -dpop-key):
// CheckCertificateStatus by certificate id, and Verify of a signature.
//
//	example status -server http://localhost:8080 -token "$TOKEN" -certificate-id <uuid>
//	example verify -token "$TOKEN" -certificate cert.pem -document document.txt -key key.pem
//
// -server and -token default to $SHOMEI_SERVER and $SHOMEI_TOKEN. A response
// is printed as protobuf JSON on stdout. An error is printed on stderr with its
// gRPC code and the google.rpc.ErrorInfo reason the server puts in its details.
//
// Exit status: 0 on success, 1 when the call fails, 2 on bad usage or unreadable files.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

const usage = `usage:
  example status [-server URL] [-token TOKEN] -certificate-id ID
  example verify [-server URL] [-token TOKEN] -certificate FILE -document FILE (-key FILE | -signature FILE) [-identify-user]

-server defaults to $SHOMEI_SERVER, else http://localhost:8080 (https:// uses TLS;
http:// speaks gRPC over cleartext HTTP/2). -token defaults to $SHOMEI_TOKEN: an API
token or an OAuth access token; with -dpop-key KEY.pem a DPoP-bound access token is
sent as "DPoP <token>" with a proof of that key on every call.
Run "example status -h" or "example verify -h" for every flag.
`

// commonFlags are the connection settings every command takes.
type commonFlags struct {
	server  string
	token   string
	dpopKey string
	timeout time.Duration
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.server, "server", envOr("SHOMEI_SERVER", "http://localhost:8080"), "server URL ($SHOMEI_SERVER)")
	fs.StringVar(&c.token, "token", os.Getenv("SHOMEI_TOKEN"), "API token or OAuth access token ($SHOMEI_TOKEN); empty sends no Authorization")
	fs.StringVar(&c.dpopKey, "dpop-key", os.Getenv("SHOMEI_DPOP_KEY"), "P-256 private key (PEM) a DPoP-bound access token is bound to ($SHOMEI_DPOP_KEY)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "deadline of the call")
}

func envOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// usageError is bad input from the command line or an unreadable file: exit status 2.
type usageError struct{ error }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var run func(args []string) error
	switch os.Args[1] {
	case "status":
		run = runStatus
	case "verify":
		run = runVerify
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	err := run(os.Args[2:])
	if err == nil {
		return
	}
	if _, ok := err.(usageError); ok {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	printRPCError(os.Stderr, err)
	os.Exit(1)
}

// withDeadline runs call with a context that ends after the -timeout.
func withDeadline(common commonFlags, call func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), common.timeout)
	defer cancel()
	return call(ctx)
}

// printJSON writes a response as protobuf JSON, the same field names and enum
// names the server's Connect JSON answers use.
func printJSON(message proto.Message) error {
	out, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(message)
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(out))
	return err
}
