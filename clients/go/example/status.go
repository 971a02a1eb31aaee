package main

import (
	"context"
	"flag"

	verifyv2 "shomei.dev/clients/go/gen/service/verify/v2"
)

// runStatus calls CertificateService.CheckCertificateStatus, which checks the
// certificate's revocation status now and records the check.
func runStatus(args []string) error {
	var common commonFlags
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	common.register(fs)
	certificateID := fs.String("certificate-id", "", "certificate id (UUID), as Verify returned it")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	conn, err := dial(common)
	if err != nil {
		return err
	}
	defer conn.Close()
	certificates := verifyv2.NewCertificateServiceClient(conn)
	return withDeadline(common, func(ctx context.Context) error {
		response, err := certificates.CheckCertificateStatus(ctx, &verifyv2.CheckCertificateStatusRequest{CertificateId: *certificateID})
		if err != nil {
			return err
		}
		return printJSON(response)
	})
}
