package codes

import (
	"strings"

	grpccodes "google.golang.org/grpc/codes"
)

// marshalFailure starts the message of the INTERNAL status grpc-go returns
// when it cannot encode a request (rpc_util.go: "grpc: error while
// marshaling: ..."), before anything is sent.
const marshalFailure = "grpc: error while marshaling"

// sizeLimitReceived and sizeLimitSent start the messages of the
// RESOURCE_EXHAUSTED status grpc-go returns when a message is over its
// size limits (rpc_util.go, stream.go): a limit of the client's, not
// quota, which a retry cannot change.
const (
	sizeLimitReceived = "grpc: received message larger than max"
	sizeLimitSent     = "trying to send message larger than max"
)

// tlsVerifyFailures are texts that only a failed TLS certificate
// verification puts into the UNAVAILABLE status grpc-go returns for a
// connection it could not make ("connection error: desc = \"transport:
// authentication handshake failed: tls: failed to verify certificate: x509:
// certificate signed by unknown authority\""):
//
//   - "x509: " starts every error of crypto/x509's verification (unknown
//     authority, expired or not yet valid, valid for other names, no IP SANs),
//     also as older Go versions report it without the tls: prefix;
//   - "tls: failed to verify certificate" is how crypto/tls wraps them since
//     Go 1.20 (also for a custom VerifyPeerCertificate that refuses);
//   - "tls: first record does not look like a TLS handshake": TLS spoken to a
//     plaintext server.
//
// A handshake that failed for a network reason ("authentication handshake
// failed: EOF", a reset) is not among them: it may succeed next time.
var tlsVerifyFailures = [...]string{
	"x509: ",
	"tls: failed to verify certificate",
	"tls: first record does not look like a TLS handshake",
}

// remoteTLSAlert precedes the alert a server sent during the handshake; an
// alert about a certificate ("bad certificate", "unknown certificate
// authority", "expired certificate", "certificate required", ...) means the
// server refused the client's certificate.
const remoteTLSAlert = "remote error: tls: "

// clientSideFailure reports whether a status with code and message is a
// failure the client produced before the server could act on the request:
// a request that could not be marshalled (INTERNAL), a message over gRPC's
// size limits (RESOURCE_EXHAUSTED) or a TLS certificate verification that
// failed (UNAVAILABLE). Retrying cannot help.
func clientSideFailure(code grpccodes.Code, msg string) bool {
	switch code {
	case grpccodes.ResourceExhausted:
		return strings.HasPrefix(msg, sizeLimitReceived) || strings.HasPrefix(msg, sizeLimitSent)
	case grpccodes.Internal:
		return strings.HasPrefix(msg, marshalFailure)
	case grpccodes.Unavailable:
		for _, s := range tlsVerifyFailures {
			if strings.Contains(msg, s) {
				return true
			}
		}
		if _, alert, ok := strings.Cut(msg, remoteTLSAlert); ok {
			return strings.Contains(alert, "certificate")
		}
	}
	return false
}
