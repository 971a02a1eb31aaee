package main

import (
	"fmt"
	"io"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	verifyv2 "shomei.dev/clients/go/gen/service/verify/v2"
)

// printRPCError writes a failed call's gRPC code and message and, from the
// status details, the google.rpc.ErrorInfo reason: the field to match on
// (never the message text). Reasons are service.verify.v2.ErrorReason names.
func printRPCError(w io.Writer, err error) {
	st, ok := status.FromError(err)
	if !ok {
		fmt.Fprintf(w, "error: %v\n", err)
		return
	}
	fmt.Fprintf(w, "code: %s\nmessage: %s\n", st.Code(), st.Message())
	info := errorInfo(st)
	if info == nil {
		return
	}
	fmt.Fprintf(w, "reason: %s\ndomain: %s\n", info.GetReason(), info.GetDomain())
	for key, value := range info.GetMetadata() {
		fmt.Fprintf(w, "metadata: %s=%s\n", key, value)
	}
	// The reason as the generated enum, for a switch over the cases a client handles.
	switch verifyv2.ErrorReason(verifyv2.ErrorReason_value[info.GetReason()]) {
	case verifyv2.ErrorReason_ERROR_REASON_TOKEN_MISSING, verifyv2.ErrorReason_ERROR_REASON_TOKEN_INVALID:
		fmt.Fprintln(w, "hint: pass an API token with -token or $SHOMEI_TOKEN")
	case verifyv2.ErrorReason_ERROR_REASON_CERTIFICATE_NOT_FOUND:
		fmt.Fprintln(w, "hint: use a certificate id that Verify returned to this account")
	}
}

// errorInfo is the first google.rpc.ErrorInfo among the status details, or nil.
func errorInfo(st *status.Status) *errdetails.ErrorInfo {
	for _, detail := range st.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}
