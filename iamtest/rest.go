package iamtest

import (
	"net/http"
	"net/http/httptest"
	"sync"

	"google.golang.org/api/option"
)

// restFace is the fake's REST face: an httptest server over the same store,
// started on first use and stopped by Close.
type restFace struct {
	once sync.Once
	srv  *httptest.Server
}

func (s *Server) rest() *httptest.Server {
	s.restFace.once.Do(func() {
		s.restFace.srv = httptest.NewServer(s.fake.RESTHandler())
	})
	if s.restFace.srv == nil {
		panic("iamtest: the REST face was asked for after Close")
	}
	return s.restFace.srv
}

// RESTEndpoint returns the base URL ("http://127.0.0.1:PORT/") of the fake's
// REST face, starting it on first use: the same store, faults and call log
// (under gRPC Method names) as the gRPC face, transcoded to HTTP/JSON by the
// google.api.http rules of the IAM mixin (on any resource), resourcemanager
// v3's IAM methods, the admin API and IAM v2 deny policies with their
// operations. Errors are written as Google's REST APIs write them, with the
// legacy "errors" array googleapi.Error prints; what the fake does not serve
// answers 501, never 404. Point a discovery client or a GAPIC REST client at
// it with RESTClientOptions.
func (s *Server) RESTEndpoint() string { return s.rest().URL + "/" }

// RESTHandler returns the fake's REST face as an http.Handler (the one
// RESTEndpoint serves: the same store, faults and call log), to serve
// behind middleware of your own, such as a handler that drops or delays
// requests at the HTTP level. Serving it is the caller's: Close does not
// stop servers it was handed to.
func (s *Server) RESTHandler() http.Handler { return s.fake.RESTHandler() }

// HTTPClient returns an *http.Client whose transport reaches the REST face
// (plain HTTP over loopback). Wrap its Transport to test a RoundTripper:
//
//	hc := &http.Client{Transport: retrier.RoundTripper(srv.HTTPClient().Transport)}
func (s *Server) HTTPClient() *http.Client { return s.rest().Client() }

// RESTClientOptions returns the options that point a REST client at the
// fake's REST face: its endpoint and no authentication. Pass
// option.WithHTTPClient after them to put a RoundTripper in between
// (WithHTTPClient wins over every other option).
func (s *Server) RESTClientOptions() []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint(s.RESTEndpoint()),
		option.WithoutAuthentication(),
		option.WithTelemetryDisabled(),
	}
}

// closeREST stops the REST face if it was started.
func (s *Server) closeREST() {
	s.restFace.once.Do(func() {}) // never start it after Close
	if s.restFace.srv != nil {
		s.restFace.srv.CloseClientConnections()
		s.restFace.srv.Close()
	}
}
