package interceptor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"syscall"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// transportKind is what the RoundTripper knows of an error its base
// returned in place of a response.
type transportKind uint8

const (
	// transportOther: not a failure of the connection the RoundTripper
	// knows (a TLS verification failure, a context error, a malformed
	// request, a wrapped io.EOF): left to the classifier as it is, so
	// Permanent by default.
	transportOther transportKind = iota
	// transportMaybeSent: the connection failed after the request may have
	// reached the server (reset, closed before a response, unexpected EOF,
	// net.ErrClosed, HTTP/2 stream or GOAWAY error, a read timeout):
	// UNAVAILABLE, retried only when the request is safe to send again.
	transportMaybeSent
	// transportNotSent: the connection was never made (the dial failed, the
	// name did not resolve, the connection was refused): UNAVAILABLE, and
	// retried even when the request is unsafe to send again, since nothing
	// reached the server.
	transportNotSent
)

// classifyTransport sorts an error base returned. The error's type is the
// proof: net/http reports a failed connect as a *net.OpError with Op
// "dial" (ECONNREFUSED, a dial timeout, no route) or a *net.DNSError, before
// a byte of the request is written; anything after that (a reset, an EOF in
// the middle of the response) may follow a request the server acted on.
// The RoundTripper therefore needs no httptrace on the success path.
func classifyTransport(err error) transportKind {
	if err == nil || tlsVerifyFailure(err) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return transportOther
	}
	var dns *net.DNSError
	if errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) {
		return transportNotSent
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return transportNotSent
	}
	switch {
	case err == io.EOF:
		// io.EOF itself, as net/http returns it when the connection closed
		// before a response began (the server may have read the request).
		// An io.EOF that another layer wrapped (after a complete response,
		// say) is that layer's to explain: it is left to the classifier.
		return transportMaybeSent
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), http2Failure(err):
		return transportMaybeSent
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		// A transport's own timeout (http.Transport's ResponseHeaderTimeout,
		// a read deadline): the caller's context lives (checked above).
		return transportMaybeSent
	}
	return transportOther
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

// http2Errors are the HTTP/2 errors a client transport returns when a
// stream or its connection failed, by package path and type name: the ones
// net/http bundles (unexported) and golang.org/x/net/http2's, matched by
// name so that neither package is linked in for it.
var http2Errors = map[[2]string]bool{
	{"net/http", "http2StreamError"}:               true,
	{"net/http", "http2GoAwayError"}:               true,
	{"net/http", "http2ConnectionError"}:           true,
	{"golang.org/x/net/http2", "StreamError"}:      true,
	{"golang.org/x/net/http2", "GoAwayError"}:      true,
	{"golang.org/x/net/http2", "ConnectionError"}:  true,
	{"net/http/internal/http2", "StreamError"}:     true, // should net/http move its copy
	{"net/http/internal/http2", "GoAwayError"}:     true,
	{"net/http/internal/http2", "ConnectionError"}: true,
}

// http2LostConn is the message of the error both HTTP/2 transports return
// when the connection was lost under a stream (errClientConnLost); it has
// no type of its own.
const http2LostConn = "http2: client connection lost"

// http2Failure reports whether err's chain holds an HTTP/2 stream,
// GOAWAY or connection error.
func http2Failure(err error) bool {
	found := false
	walkErrors(err, func(e error) bool {
		t := reflect.TypeOf(e)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if http2Errors[[2]string{t.PkgPath(), t.Name()}] || e.Error() == http2LostConn {
			found = true
		}
		return found
	})
	return found
}

// walkErrors calls f on err and every error it wraps, depth first, until f
// returns true.
func walkErrors(err error, f func(error) bool) bool {
	if err == nil {
		return false
	}
	if f(err) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walkErrors(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if walkErrors(e, f) {
				return true
			}
		}
	}
	return false
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
func wrapTransport(err error) error {
	if _, done := err.(*transportError); done {
		return err
	}
	switch classifyTransport(err) {
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
