package main

import (
	"context"
	"crypto/sha256"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"

	verifyv2 "shomei.dev/clients/go/gen/service/verify/v2"
)

// runVerify calls VerificationService.Verify with a certificate, the SHA-256
// digest of a document and a signature over it: the signature read from
// -signature, or made here with -key, as the card would make it.
func runVerify(args []string) error {
	var common commonFlags
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	common.register(fs)
	certificateFile := fs.String("certificate", "", "signer's certificate, PEM or DER")
	documentFile := fs.String("document", "", "the signed document")
	keyFile := fs.String("key", "", "private key (PEM) to sign the document with, standing in for the card")
	signatureFile := fs.String("signature", "", "signature over the document's SHA-256 digest, as the card made it")
	identifyUser := fs.Bool("identify-user", false, "find or create the certificate's user and return it")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *certificateFile == "" || *documentFile == "" || (*keyFile == "") == (*signatureFile == "") {
		return usageError{errors.New("verify needs -certificate, -document, and one of -key or -signature")}
	}
	certificate, err := readCertificate(*certificateFile)
	if err != nil {
		return usageError{err}
	}
	document, err := os.ReadFile(*documentFile)
	if err != nil {
		return usageError{err}
	}
	digest := sha256.Sum256(document)
	signature, err := signatureOver(digest[:], *keyFile, *signatureFile)
	if err != nil {
		return usageError{err}
	}

	conn, err := dial(common)
	if err != nil {
		return err
	}
	defer conn.Close()
	verifications := verifyv2.NewVerificationServiceClient(conn)
	return withDeadline(common, func(ctx context.Context) error {
		response, err := verifications.Verify(ctx, &verifyv2.VerifyRequest{
			Certificate:   certificate,
			HashAlgorithm: verifyv2.HashAlgorithm_HASH_ALGORITHM_SHA256,
			Digest:        digest[:],
			Signature:     signature,
			IdentifyUser:  *identifyUser,
		})
		if err != nil {
			return err
		}
		return printJSON(response)
	})
}

// readCertificate returns the DER of a certificate file in PEM or DER.
func readCertificate(file string) ([]byte, error) {
	content, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if block, _ := pem.Decode(content); block != nil {
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%s: PEM block %q, want CERTIFICATE", file, block.Type)
		}
		return block.Bytes, nil
	}
	return content, nil
}

// signatureOver reads the signature file, or signs the digest with the key file.
func signatureOver(digest []byte, keyFile, signatureFile string) ([]byte, error) {
	if signatureFile != "" {
		return os.ReadFile(signatureFile)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	return signDigest(keyPEM, digest)
}
