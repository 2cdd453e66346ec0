package interceptor_test

// Tests of what the interceptor must not retry because a retry cannot help
// or could do harm: failures the client produced before the server could act
// (TLS verification, a request that cannot be marshalled), and the replay of
// a SetIamPolicy that IAM does not check against its etag. Their rig is their
// own and small: a Retrier on skipClock, an interceptor under it that counts
// the attempts, and a raw connection.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// skipClock is a virtual interceptor.Clock: Sleep returns at once, moves
// the time on and records the wait.
type skipClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *skipClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *skipClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return nil
}

func (c *skipClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// attemptCounter is a unary interceptor placed under the Retrier's: it
// counts the attempts that reach gRPC.
type attemptCounter struct{ n atomic.Int32 }

func (a *attemptCounter) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	a.n.Add(1)
	return invoker(ctx, method, req, reply, cc, opts...)
}

// newSkipRetrier is a Retrier on a fresh skipClock with r = 0.5, plus opts.
func newSkipRetrier(t *testing.T, opts ...interceptor.Option) (*interceptor.Retrier, *skipClock) {
	t.Helper()
	clk := &skipClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	r, err := interceptor.New(append([]interceptor.Option{
		interceptor.WithClock(clk),
		interceptor.WithRandom(func() float64 { return 0.5 }),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r, clk
}

// tlsServer serves gRPC over TLS with cert on a loopback port until the
// test ends, and returns its address.
func tlsServer(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return lis.Addr().String()
}

// selfSigned makes a self-signed certificate for 127.0.0.1 and localhost,
// valid from notBefore to notAfter.
func selfSigned(t *testing.T, notBefore, notAfter time.Time) (tls.Certificate, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "iamretry test"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, leaf
}

// TestTLSVerificationFailureIsNotRetried: an UNAVAILABLE whose cause is a
// failed TLS certificate verification (unknown authority, expired
// certificate, host name mismatch), from a real handshake, ends the call
// after one attempt and no wait: the server never saw the request.
func TestTLSVerificationFailureIsNotRetried(t *testing.T) {
	t.Parallel()
	now := time.Now()
	good, goodLeaf := selfSigned(t, now.Add(-time.Hour), now.Add(time.Hour))
	expired, expiredLeaf := selfSigned(t, now.Add(-2*time.Hour), now.Add(-time.Hour))
	pool := func(c *x509.Certificate) *x509.CertPool {
		p := x509.NewCertPool()
		p.AddCert(c)
		return p
	}
	for _, tc := range []struct {
		name   string
		cert   tls.Certificate
		client *tls.Config
		want   string // in the error message
	}{
		{"unknown authority", good, &tls.Config{RootCAs: x509.NewCertPool()}, "unknown authority"},
		{"expired", expired, &tls.Config{RootCAs: pool(expiredLeaf)}, "expired"},
		{"host name mismatch", good, &tls.Config{RootCAs: pool(goodLeaf), ServerName: "iam.googleapis.com"}, "iam.googleapis.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := tlsServer(t, tc.cert)
			r, clk := newSkipRetrier(t)
			var count attemptCounter
			conn, err := grpc.NewClient(addr,
				grpc.WithTransportCredentials(credentials.NewTLS(tc.client)),
				grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor(), count.intercept))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = iampb.NewIAMPolicyClient(conn).GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("GetIamPolicy over a failing TLS handshake: %v, want UNAVAILABLE", err)
			}
			if msg := status.Convert(err).Message(); !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not name the cause %q", msg, tc.want)
			}
			if n := count.n.Load(); n != 1 {
				t.Errorf("%d attempts, want 1: a TLS verification failure must not be retried", n)
			}
			if w := clk.Waits(); len(w) != 0 {
				t.Errorf("waited %v, want no wait", w)
			}
		})
	}
}

// TestUnmarshallableRequestIsNotRetried: a request gRPC cannot marshal
// (invalid UTF-8 in a string field) fails INTERNAL on the client; it ends the
// call after one attempt and no wait, and nothing reaches the server.
func TestUnmarshallableRequestIsNotRetried(t *testing.T) {
	t.Parallel()
	fake := iamtest.NewServer(t)
	r, clk := newSkipRetrier(t)
	var count attemptCounter
	conn, err := fake.Dial(context.Background(), grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor(), count.intercept))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_, err = iampb.NewIAMPolicyClient(conn).GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/\xff\xfe"})
	if status.Code(err) != codes.Internal || !strings.Contains(status.Convert(err).Message(), "grpc: error while marshaling") {
		t.Fatalf("GetIamPolicy with invalid UTF-8: %v, want INTERNAL grpc: error while marshaling", err)
	}
	if n := count.n.Load(); n != 1 {
		t.Errorf("%d attempts, want 1: a request that cannot be marshalled must not be retried", n)
	}
	if w := clk.Waits(); len(w) != 0 {
		t.Errorf("waited %v, want no wait", w)
	}
	if n := fake.CountCalls(iamtest.MethodGetIamPolicy); n != 0 {
		t.Errorf("the server saw %d calls, want 0", n)
	}
}
