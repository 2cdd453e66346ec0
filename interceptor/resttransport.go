package interceptor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
	"google.golang.org/api/googleapi"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// transportKind is what the RoundTripper knows of an error its base
// returned in place of a response.
type transportKind uint8

const (
	// transportOther: not a failure of the transport (a TLS verification
	// failure, a context error, an error with a code of its own or that
	// says retrying cannot help, a request net/http refuses to send): left
	// to the classifier as it is, so Permanent by default.
	transportOther transportKind = iota
	// transportMaybeSent: the transport failed after the request may have
	// reached the server (reset, closed before a response, an HTTP/2 stream
	// or GOAWAY error, a read timeout, any other failure of a well-formed
	// request): UNAVAILABLE, retried only when the request is safe to send
	// again.
	transportMaybeSent
	// transportNotSent: the connection was never made (the dial failed, the
	// name did not resolve, the connection was refused): UNAVAILABLE, and
	// retried even when the request is unsafe to send again, since nothing
	// reached the server.
	transportNotSent
)

// classifyTransport sorts an error base returned for req, by behaviour, as
// go-retryablehttp does: a well-formed request whose context did not end
// and that got no response failed in the transport. The error's type proves
// only that nothing was sent: net/http reports a failed connect as a
// *net.OpError with Op "dial" (ECONNREFUSED, a dial timeout, no route) or
// a *net.DNSError, before a byte of the request is written. An HTTP/2
// stream error (x/net's, or net/http's own, which converts to it) may
// follow a request the server acted on; so may anything else. The
// RoundTripper therefore needs no httptrace on the success path.
func classifyTransport(req *http.Request, err error) transportKind {
	if err == nil || tlsVerifyFailure(err) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return transportOther
	}
	var dns *net.DNSError
	if errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) {
		return transportNotSent
	}
	var op *net.OpError
	if errors.As(err, &op) {
		if op.Op == "dial" {
			return transportNotSent
		}
		return transportMaybeSent // a read or write on the connection failed
	}
	var (
		stream http2.StreamError
		goAway http2.GoAwayError
		conn   http2.ConnectionError
		ne     net.Error
	)
	switch {
	case errors.As(err, &stream), errors.As(err, &goAway), errors.As(err, &conn), errors.As(err, &ne) && ne.Timeout(),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return transportMaybeSent
	}
	if hasVerdict(err) || malformed(req) {
		return transportOther
	}
	return transportMaybeSent
}

// hasVerdict reports whether err says what it is on its own: a code (a
// gRPC status, a *googleapi.Error), or that retrying cannot help
// (Temporary() false, as cloud.google.com/go/auth's *auth.Error says of a
// token endpoint's 400).
func hasVerdict(err error) bool {
	if ue, ok := err.(*url.Error); ok {
		err = ue.Err // its Temporary is its Err's, or false for an Err without one
	}
	var (
		coded interface{ GRPCStatus() *status.Status }
		api   *googleapi.Error
		temp  interface{ Temporary() bool }
	)
	if errors.As(err, &coded) || errors.As(err, &api) {
		return true
	}
	// The net package's Temporary is deprecated: false for most failures
	// of a connection. Only another error's counts.
	if !errors.As(err, &temp) {
		return false
	}
	_, isNet := temp.(net.Error)
	return !isNet && !temp.Temporary()
}

// malformed reports whether net/http refuses to send req whatever the
// network does: a scheme other than http or https, no host, an invalid
// method or header.
func malformed(req *http.Request) bool {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" || req.URL.Host == "" {
		return true
	}
	if req.Method != "" && strings.IndexFunc(req.Method, func(r rune) bool { return !httpguts.IsTokenRune(r) }) >= 0 {
		return true
	}
	for k, vs := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return true
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return true
			}
		}
	}
	return false
}

// tlsVerifyFailure reports whether err is a failed TLS certificate
// verification, TLS spoken to a plaintext server, or a certificate the
// server refused (an alert about a certificate): Permanent, as over gRPC
// (codes.OfError): retrying cannot change any of them. Another alert is
// left to the connection rules.
func tlsVerifyFailure(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
		roots    x509.SystemRootsError
		record   tls.RecordHeaderError
		alert    tls.AlertError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &invalid) ||
		errors.As(err, &hostname) || errors.As(err, &roots) || errors.As(err, &record) ||
		(errors.As(err, &alert) && strings.Contains(alert.Error(), "certificate"))
}

// transportError is what the RoundTripper returns for an attempt that
// failed in the transport: the error base returned, unchanged (Error,
// errors.Is and errors.As see it), with gRPC's code for it, UNAVAILABLE, so
// that codes.OfError, status.Code and an owner above (Retrier.Do, a policy
// Updater) read it as they read the same failure over gRPC.
type transportError struct {
	err     error
	notSent bool // the request never left the client
}

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// GRPCStatus is UNAVAILABLE, as grpc-go reports a connection that failed.
func (e *transportError) GRPCStatus() *status.Status {
	return status.New(grpccodes.Unavailable, e.err.Error())
}

// Timeout keeps what the error says of itself visible through *url.Error,
// which asks its Err directly.
func (e *transportError) Timeout() bool {
	var ne net.Error
	return errors.As(e.err, &ne) && ne.Timeout()
}

// wrapTransport returns err as the RoundTripper reports it: a
// *transportError when it is a failure of the connection, else err.
func wrapTransport(req *http.Request, err error) error {
	if _, done := err.(*transportError); done {
		return err
	}
	switch classifyTransport(req, err) {
	case transportMaybeSent:
		return &transportError{err: err}
	case transportNotSent:
		return &transportError{err: err, notSent: true}
	}
	return err
}

// attemptTimeoutError is what an attempt cut by the Retrier's own
// per-attempt timeout (WithPerAttemptTimeout) returns, while the caller's
// context lives: DEADLINE_EXCEEDED, as grpc-go reports an attempt whose
// deadline passed. While it may be retried (by the engine, or by an owner
// above: Do, WaitVisible, Transact, an Updater) it does not wrap
// context.DeadlineExceeded, so that no one takes it for the caller's own
// deadline and an owner retries it as Transient. The error a call without
// an owner ends with (final) wraps context.DeadlineExceeded and base's
// error, as net/http's own timeouts do.
type attemptTimeoutError struct {
	d     time.Duration
	err   error // base's error
	final bool
}

func (e *attemptTimeoutError) Error() string {
	return "iamretry: attempt cut by the per-attempt timeout (" + e.d.String() + "): " + e.err.Error()
}

// Unwrap is context.DeadlineExceeded and base's error once final; nothing
// before.
func (e *attemptTimeoutError) Unwrap() []error {
	if !e.final {
		return nil
	}
	return []error{context.DeadlineExceeded, e.err}
}

// GRPCStatus is DEADLINE_EXCEEDED.
func (e *attemptTimeoutError) GRPCStatus() *status.Status {
	return status.New(grpccodes.DeadlineExceeded, e.Error())
}

// Timeout is true: *url.Error and net.Error callers see a timeout.
func (e *attemptTimeoutError) Timeout() bool { return true }

// isNotSent reports whether err is a transport failure of a request that
// never left the client.
func isNotSent(err error) bool {
	te, ok := err.(*transportError)
	return ok && te.notSent
}
