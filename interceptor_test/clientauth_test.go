package interceptor_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestNewRESTClientAuthenticated: without option.WithHTTPClient,
// NewRESTClient builds the authenticated client from opts: a service-account
// key file whose token_uri is a local token server (never the machine's
// credentials). The token server mints the token, the fake sees it as the
// Authorization header of every attempt, and the retries are the
// Retrier's: one schedule.
func TestNewRESTClientAuthenticated(t *testing.T) {
	var mu sync.Mutex
	var tokenReqs int
	var scopes []string
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_ = req.ParseForm()
		mu.Lock()
		tokenReqs++
		scopes = append(scopes, req.Form.Get("assertion"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"test-token","token_type":"Bearer","expires_in":3600}`))
	}))
	t.Cleanup(tokens.Close)

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: must(x509.MarshalPKCS8PrivateKey(key))})
	keyJSON, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     "p1",
		"private_key_id": "k1",
		"private_key":    string(pemKey),
		"client_email":   "robot@p1.iam.gserviceaccount.com",
		"client_id":      "1",
		"token_uri":      tokens.URL + "/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(file, keyJSON, 0o600); err != nil {
		t.Fatal(err)
	}
	// Nothing may fall back to the machine's credentials.
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "absent.json"))

	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	var authMu sync.Mutex
	var auths, quota []string
	h := http.Handler(g.srvREST(t))
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		authMu.Lock()
		auths = append(auths, req.Header.Get("Authorization"))
		quota = append(quota, req.Header.Get("X-Goog-User-Project"))
		authMu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(front.Close)

	ctx := context.Background()
	svc, err := interceptor.NewRESTClient(ctx, g.retrier, iamv1.NewService,
		option.WithEndpoint(front.URL+"/"),
		option.WithAuthCredentialsFile(option.ServiceAccount, file),
		// Applied by the built client, not passed to the constructor
		// (which refuses it beside option.WithHTTPClient).
		option.WithQuotaProject("billing-1"),
	)
	if err != nil {
		t.Fatal(err)
	}
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	if _, err := svc.Projects.ServiceAccounts.GetIamPolicy("projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com").Context(ctx).Do(); err == nil {
		t.Fatal("read succeeded during an outage")
	}
	if n := g.fake.CountCalls(iamtest.AnyMethod); n != oneSchedule {
		t.Fatalf("%d server calls, want %d", n, oneSchedule)
	}
	mu.Lock()
	defer mu.Unlock()
	if tokenReqs == 0 {
		t.Fatal("the local token server was never asked: the key file's token_uri was not used")
	}
	authMu.Lock()
	defer authMu.Unlock()
	for i, a := range auths {
		if a != "Bearer test-token" {
			t.Fatalf("attempt %d: Authorization %q, want the local server's token", i+1, a)
		}
		if quota[i] != "billing-1" {
			t.Fatalf("attempt %d: X-Goog-User-Project %q, want billing-1", i+1, quota[i])
		}
	}
	// The cloud-platform scope was asked for (opts named none): it is in the
	// signed assertion's claims.
	if !strings.Contains(decodeClaims(t, scopes[0]), "https://www.googleapis.com/auth/cloud-platform") {
		t.Fatalf("assertion claims %s: no cloud-platform scope", decodeClaims(t, scopes[0]))
	}
}

// srvREST returns a handler that forwards to the fake's REST face.
func (g *rig) srvREST(t *testing.T) http.Handler {
	t.Helper()
	hc := g.fake.HTTPClient()
	base := strings.TrimSuffix(g.fake.RESTEndpoint(), "/")
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		out, err := http.NewRequestWithContext(req.Context(), req.Method, base+req.URL.RequestURI(), req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out.Header = req.Header.Clone()
		resp, err := hc.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			_, _ = w.Write(buf[:n])
			if err != nil {
				return
			}
		}
	})
}

// decodeClaims returns the claims part of a JWT, decoded.
func decodeClaims(t *testing.T, jwt string) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("assertion %q is not a JWT", jwt)
	}
	b, err := base64URL(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func base64URL(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
