package iamtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"google.golang.org/api/option"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// RESTHandler returns the fake's REST face as an http.Handler (the one
// RESTEndpoint serves: the same store, faults and call log), to serve
// behind middleware of your own, such as a handler that drops or delays
// requests at the HTTP level. Serving it is the caller's: Close does not
// stop servers it was handed to.
func (s *Server) RESTHandler() http.Handler {
	return s.withDenyREST(&restHandler{s: s, routes: s.restRoutes()}) // deny policies: deny_rest.go
}

// restHandler is the fake's REST face: an http.Handler that serves the
// same store, through the same fault layer and call log, as the gRPC
// services, with the HTTP/JSON transcoding of their google.api.http rules:
//
//	POST /v1/{resource=**}:getIamPolicy, :setIamPolicy, :testIamPermissions
//	     (google.iam.v1.IAMPolicy; the admin service's methods for
//	     projects/*/serviceAccounts/*)
//	POST /v3/{projects,folders,organizations}/*:getIamPolicy, ...
//	     (google.cloud.resourcemanager.v3)
//	GET, POST /v1/projects/*/serviceAccounts; GET, PUT, PATCH, DELETE
//	     /v1/projects/*/serviceAccounts/*, POST ...:enable, :disable,
//	     :undelete; GET, POST .../keys, POST .../keys:upload; GET, DELETE
//	     .../keys/*, POST .../keys/*:enable, :disable; GET /v1/roles,
//	     /v1/roles/*; GET, POST /v1/{projects,organizations}/*/roles; GET,
//	     PATCH, DELETE .../roles/*, POST .../roles/*:undelete; POST
//	     /v1/roles:queryGrantableRoles, /v1/permissions:queryTestablePermissions
//	     (google.iam.admin.v1.IAM, the google.api.http rules of
//	     google/iam/admin/v1/iam.proto)
//	GET, POST /v2/policies/*/denypolicies; GET, PUT, DELETE .../denypolicies/*;
//	     GET .../denypolicies/*/operations/* (google.iam.v2.Policies and its
//	     operations: deny_rest.go)
//
// on any host, so the google.golang.org/api discovery clients
// (iam/v1, cloudresourcemanager/v3) and GAPIC REST clients
// (NewIamPolicyRESTClient, NewProjectsRESTClient, ...) pointed at it with
// option.WithEndpoint work unchanged. Request bodies and query parameters
// are read as Google's front end reads them: protojson, where a JSON name
// that is no field of the request answers 400 "Invalid JSON payload
// received. Unknown name ..." with a google.rpc.BadRequest; query
// parameters are bound to request fields, except on a method whose body is
// the whole request (see SetRESTQueryBindsBodyFields); the fields= system
// parameter selects the fields of the answer. Answers are written as
// protojson. Each call is logged under its gRPC method name, with the
// x-retry-attempt header as its Attempt, and faults set for that method
// (or AnyMethod) apply as on gRPC: an injected error, or a lost answer
// after the handler committed. Errors are written as Google's REST APIs
// write them: the HTTP status of the code and
// {"error": {"code", "message", "errors", "status", "details"}}, "errors"
// the legacy array [{"message", "domain": "global", "reason"}] (see
// legacyReason), details (such as a google.rpc.RetryInfo) in their JSON
// form with "@type". The admin
// methods the fake does not serve (:signBlob, :signJwt,
// iamPolicies:queryAuditableServices, iamPolicies:lintPolicy without a
// condition) answer 501
// UNIMPLEMENTED through the fault layer and the call log, as over gRPC, and
// so does any other path: never 404, which a caller that retries NOT_FOUND
// would wait out.
type restHandler struct {
	s      *Server
	routes []restRoute
}

// restRoute is one transcoded method.
type restRoute struct {
	verb   string
	path   []string // "*" is one segment
	custom string   // after ':' on the last segment
	method Method   // full gRPC method, for the fault layer and the call log
	// newReq returns the request message; bodyField is where the JSON body
	// goes ("*": the whole message, "": no body); nameField gets the path
	// (without the version) up to the custom verb, or parent for a
	// collection.
	newReq    func() proto.Message
	bodyField string
	nameField string
	trimLast  bool // the name is the path without its last segment (a collection)
	call      func(ctx context.Context, req any) (any, error)
}

func (s *Server) restRoutes() []restRoute {
	pol := &policyService{s: s}
	adm := &adminService{s: s}
	prj := &projectsService{p: pol}
	fld := &foldersService{p: pol}
	org := &organizationsService{p: pol}
	getReq := func() proto.Message { return new(iampb.GetIamPolicyRequest) }
	setReq := func() proto.Message { return new(iampb.SetIamPolicyRequest) }
	testReq := func() proto.Message { return new(iampb.TestIamPermissionsRequest) }
	type policyServer interface {
		GetIamPolicy(context.Context, *iampb.GetIamPolicyRequest) (*iampb.Policy, error)
		SetIamPolicy(context.Context, *iampb.SetIamPolicyRequest) (*iampb.Policy, error)
		TestIamPermissions(context.Context, *iampb.TestIamPermissionsRequest) (*iampb.TestIamPermissionsResponse, error)
	}
	iamMethods := func(path, service string, srv policyServer) []restRoute {
		p := strings.Split(path, "/")
		return []restRoute{
			{verb: "POST", path: p, custom: "getIamPolicy", method: Method(service + "GetIamPolicy"), newReq: getReq, bodyField: "*", nameField: "resource",
				call: func(ctx context.Context, r any) (any, error) {
					return srv.GetIamPolicy(ctx, r.(*iampb.GetIamPolicyRequest))
				}},
			{verb: "POST", path: p, custom: "setIamPolicy", method: Method(service + "SetIamPolicy"), newReq: setReq, bodyField: "*", nameField: "resource",
				call: func(ctx context.Context, r any) (any, error) {
					return srv.SetIamPolicy(ctx, r.(*iampb.SetIamPolicyRequest))
				}},
			{verb: "POST", path: p, custom: "testIamPermissions", method: Method(service + "TestIamPermissions"), newReq: testReq, bodyField: "*", nameField: "resource",
				call: func(ctx context.Context, r any) (any, error) {
					return srv.TestIamPermissions(ctx, r.(*iampb.TestIamPermissionsRequest))
				}},
		}
	}
	var routes []restRoute
	routes = append(routes, iamMethods("v1/projects/*/serviceAccounts/*", "/google.iam.admin.v1.IAM/", adm)...)
	routes = append(routes, iamMethods("v3/projects/*", "/google.cloud.resourcemanager.v3.Projects/", prj)...)
	routes = append(routes, iamMethods("v3/folders/*", "/google.cloud.resourcemanager.v3.Folders/", fld)...)
	routes = append(routes, iamMethods("v3/organizations/*", "/google.cloud.resourcemanager.v3.Organizations/", org)...)
	routes = append(routes,
		restRoute{verb: "GET", path: strings.Split("v1/projects/*/serviceAccounts", "/"), method: MethodListServiceAccounts, trimLast: true,
			newReq: func() proto.Message { return new(adminpb.ListServiceAccountsRequest) }, nameField: "name",
			call: func(ctx context.Context, r any) (any, error) {
				return adm.ListServiceAccounts(ctx, r.(*adminpb.ListServiceAccountsRequest))
			}},
		restRoute{verb: "POST", path: strings.Split("v1/projects/*/serviceAccounts", "/"), method: MethodCreateServiceAccount, trimLast: true,
			newReq: func() proto.Message { return new(adminpb.CreateServiceAccountRequest) }, bodyField: "*", nameField: "name",
			call: func(ctx context.Context, r any) (any, error) {
				return adm.CreateServiceAccount(ctx, r.(*adminpb.CreateServiceAccountRequest))
			}},
		restRoute{verb: "GET", path: strings.Split("v1/projects/*/serviceAccounts/*", "/"), method: MethodGetServiceAccount,
			newReq: func() proto.Message { return new(adminpb.GetServiceAccountRequest) }, nameField: "name",
			call: func(ctx context.Context, r any) (any, error) {
				return adm.GetServiceAccount(ctx, r.(*adminpb.GetServiceAccountRequest))
			}},
		restRoute{verb: "DELETE", path: strings.Split("v1/projects/*/serviceAccounts/*", "/"), method: MethodDeleteServiceAccount,
			newReq: func() proto.Message { return new(adminpb.DeleteServiceAccountRequest) }, nameField: "name",
			call: func(ctx context.Context, r any) (any, error) {
				return adm.DeleteServiceAccount(ctx, r.(*adminpb.DeleteServiceAccountRequest))
			}},
		restRoute{verb: "POST", path: strings.Split("v1/projects/*/serviceAccounts/*/keys", "/"), method: MethodCreateServiceAccountKey, trimLast: true,
			newReq: func() proto.Message { return new(adminpb.CreateServiceAccountKeyRequest) }, bodyField: "*", nameField: "name",
			call: func(ctx context.Context, r any) (any, error) {
				return adm.CreateServiceAccountKey(ctx, r.(*adminpb.CreateServiceAccountKeyRequest))
			}},
	)
	routes = append(routes, adminRESTRoutes(adm)...)
	// The IAM mixin on any other resource, last: the routes above are more
	// specific.
	routes = append(routes, iamMethods("v1/**", "/google.iam.v1.IAMPolicy/", pol)...)
	return routes
}

// match returns the route of a request and the resource name in its path.
func (h *restHandler) match(verb, path string) (restRoute, string, bool) {
	path = strings.TrimLeft(path, "/") // a GAPIC endpoint with a trailing slash sends "//v1/..."
	rest, custom := path, ""
	if i := strings.LastIndexByte(path, ':'); i > strings.LastIndexByte(path, '/') {
		rest, custom = path[:i], path[i+1:]
	}
	segs := strings.Split(rest, "/")
	for _, r := range h.routes {
		if r.verb != verb || r.custom != custom || !routeMatch(r.path, segs) {
			continue
		}
		name := strings.Join(segs[1:], "/") // without the version
		if r.trimLast {
			name = strings.Join(segs[1:len(segs)-1], "/")
		}
		return r, name, true
	}
	return restRoute{}, "", false
}

func routeMatch(pattern, segs []string) bool {
	if n := len(pattern); n > 0 && pattern[n-1] == "**" {
		if len(segs) < n || segs[0] != pattern[0] {
			return false
		}
		for _, s := range segs[1:] {
			if s == "" {
				return false
			}
		}
		return true
	}
	if len(pattern) != len(segs) {
		return false
	}
	for i, p := range pattern {
		if segs[i] == "" || (p != "*" && p != segs[i]) {
			return false
		}
	}
	return true
}

// restIn reads the JSON of the discovery clients (names as lowerCamelCase,
// enums as names) and of GAPIC REST clients (enums as numbers).
var restIn = protojson.UnmarshalOptions{DiscardUnknown: true}

func (h *restHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, name, ok := h.match(r.Method, r.URL.Path)
	if !ok {
		writeRESTError(w, status.Errorf(codes.Unimplemented, "iamtest: no method for %s %s", r.Method, r.URL.Path))
		return
	}
	req := route.newReq()
	if route.bodyField != "" {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeRESTError(w, status.Errorf(codes.InvalidArgument, "iamtest: reading the body: %v", err))
			return
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			target, err := bodyTarget(req, route.bodyField)
			if err != nil {
				writeRESTError(w, err)
				return
			}
			body = fixFieldMasks(body, target.ProtoReflect().Descriptor())
			if name, at, ok := unknownJSONName(body, target.ProtoReflect().Descriptor()); ok {
				writeRESTError(w, unknownNameError(name, at))
				return
			}
			if err := restIn.Unmarshal(body, target); err != nil {
				writeRESTError(w, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received. %v", err))
				return
			}
		}
	}
	query := r.URL.Query()
	var selected fieldTree
	if f := query.Get("fields"); f != "" {
		var err error
		if selected, err = parseFields(f); err != nil {
			writeRESTError(w, err)
			return
		}
	}
	if route.bodyField != "*" || h.s.fid().queryBindsBody {
		if err := setQuery(req.ProtoReflect(), query); err != nil {
			writeRESTError(w, err)
			return
		}
	}
	if route.nameField != "" {
		setField(req.ProtoReflect(), route.nameField, name)
	}

	out, ok := h.s.callREST(w, r, route.method, req, route.call)
	if !ok {
		return
	}
	if selected != nil {
		out = selectFields(out, selected)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(out)
}

// callREST answers the JSON of what call answers for req, run as the gRPC
// method through the fault layer and the call log, with r's attemptHeader
// passed on as incoming metadata. On an error it writes the REST error to w
// and answers false.
func (s *Server) callREST(w http.ResponseWriter, r *http.Request, method Method, req any, call grpc.UnaryHandler) ([]byte, bool) {
	ctx := r.Context()
	if v := r.Header.Get(attemptHeader); v != "" {
		ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(attemptHeader, v))
	}
	resp, err := s.intercept(ctx, req, &grpc.UnaryServerInfo{FullMethod: string(method)}, call)
	if err != nil {
		writeRESTError(w, err)
		return nil, false
	}
	out, err := protojson.Marshal(resp.(proto.Message))
	if err != nil {
		writeRESTError(w, status.Errorf(codes.Internal, "iamtest: encoding the answer: %v", err))
		return nil, false
	}
	return out, true
}

// setString sets the string field named field (its proto name) of m.
func setString(m protoreflect.Message, field, v string) {
	if fd := m.Descriptor().Fields().ByName(protoreflect.Name(field)); fd != nil && fd.Kind() == protoreflect.StringKind {
		m.Set(fd, protoreflect.ValueOfString(v))
	}
}

// setQuery sets the scalar fields named by the query's keys (JSON names,
// dotted through messages: options.requestedPolicyVersion). Keys that name
// no field, and the system parameters ($alt, alt, prettyPrint, key,
// fields, ...), are skipped.
func setQuery(m protoreflect.Message, q map[string][]string) error {
	for key, vals := range q {
		if len(vals) == 0 || strings.HasPrefix(key, "$") {
			continue
		}
		parts := strings.Split(key, ".")
		msg := m
		var fd protoreflect.FieldDescriptor
		for i, p := range parts {
			fd = msg.Descriptor().Fields().ByJSONName(p)
			if fd == nil || fd.IsMap() || (fd.IsList() && i < len(parts)-1) {
				fd = nil
				break
			}
			if i < len(parts)-1 {
				if fd.Kind() != protoreflect.MessageKind {
					fd = nil
					break
				}
				msg = msg.Mutable(fd).Message()
			}
		}
		if fd == nil {
			continue
		}
		if fd.Kind() == protoreflect.MessageKind {
			if fd.IsList() || fd.Message().FullName() != "google.protobuf.FieldMask" {
				continue
			}
			// A FieldMask is "a,b.c" in a query (google/protobuf/field_mask.proto's JSON form).
			fm := msg.Mutable(fd).Message()
			paths := fm.Mutable(fm.Descriptor().Fields().ByName("paths")).List()
			for _, v := range vals {
				for p := range strings.SplitSeq(v, ",") {
					if p = strings.TrimSpace(p); p != "" {
						paths.Append(protoreflect.ValueOfString(snakeCase(p)))
					}
				}
			}
			continue
		}
		if fd.IsList() {
			list := msg.Mutable(fd).List()
			for _, s := range vals {
				v, err := scalar(fd, s)
				if err != nil {
					return status.Errorf(codes.InvalidArgument, "Invalid value at '%s' (%s), %q", key, fd.Kind(), s)
				}
				list.Append(v)
			}
			continue
		}
		v, err := scalar(fd, vals[0])
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "Invalid value at '%s' (%s), %q", key, fd.Kind(), vals[0])
		}
		msg.Set(fd, v)
	}
	return nil
}

func scalar(fd protoreflect.FieldDescriptor, s string) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(s), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(s, 10, 32)
		return protoreflect.ValueOfInt32(int32(n)), err
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(s, 10, 64)
		return protoreflect.ValueOfInt64(n), err
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(s)
		return protoreflect.ValueOfBool(b), err
	case protoreflect.BytesKind:
		// Bytes travel base64-encoded, standard or URL alphabet, padded or not.
		s = strings.TrimRight(s, "=")
		if b, err := base64.RawStdEncoding.DecodeString(s); err == nil {
			return protoreflect.ValueOfBytes(b), nil
		}
		b, err := base64.RawURLEncoding.DecodeString(s)
		return protoreflect.ValueOfBytes(b), err
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByName(protoreflect.Name(s)); ev != nil {
			return protoreflect.ValueOfEnum(ev.Number()), nil
		}
		n, err := strconv.ParseInt(s, 10, 32)
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), err
	}
	return protoreflect.Value{}, strconv.ErrSyntax
}

// writeRESTError writes err as Google's REST APIs do.
func writeRESTError(w http.ResponseWriter, err error) {
	st := status.Convert(err)
	details := make([]json.RawMessage, 0, len(st.Proto().GetDetails()))
	for _, d := range st.Proto().GetDetails() {
		if b, err := (protojson.MarshalOptions{Resolver: detailResolver{}}).Marshal(d); err == nil {
			details = append(details, b)
		}
	}
	type legacy struct {
		Message string `json:"message"`
		Domain  string `json:"domain"`
		Reason  string `json:"reason"`
	}
	type body struct {
		Code    int               `json:"code"`
		Message string            `json:"message"`
		Errors  []legacy          `json:"errors"`
		Status  string            `json:"status"`
		Details []json.RawMessage `json:"details,omitempty"`
	}
	code := httpStatus(st.Code())
	out, _ := json.Marshal(struct {
		Error body `json:"error"`
	}{body{Code: code, Message: st.Message(), Status: restStatusName(st.Code()), Details: details,
		Errors: []legacy{{Message: st.Message(), Domain: "global", Reason: legacyReason(st.Code())}}}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(out)
}

// legacyReason is the reason of the legacy "errors" array that Google's
// REST front end writes beside code, message, status and details (what
// googleapi.Error prints after the message: "..., badRequest"): badRequest,
// failedPrecondition, outOfRange, unauthorized, forbidden, notFound,
// alreadyExists, aborted, rateLimitExceeded, canceled, notImplemented,
// deadlineExceeded, and backendError for the other server errors.
func legacyReason(c codes.Code) string {
	switch c {
	case codes.InvalidArgument:
		return "badRequest"
	case codes.FailedPrecondition:
		return "failedPrecondition"
	case codes.OutOfRange:
		return "outOfRange"
	case codes.Unauthenticated:
		return "unauthorized"
	case codes.PermissionDenied:
		return "forbidden"
	case codes.NotFound:
		return "notFound"
	case codes.AlreadyExists:
		return "alreadyExists"
	case codes.Aborted:
		return "aborted"
	case codes.ResourceExhausted:
		return "rateLimitExceeded"
	case codes.Canceled:
		return "canceled"
	case codes.Unimplemented:
		return "notImplemented"
	case codes.DeadlineExceeded:
		return "deadlineExceeded"
	}
	return "backendError"
}

// restStatusName is the google.rpc.Code enum name Google writes in "status".
func restStatusName(c codes.Code) string {
	if c == codes.Canceled {
		return "CANCELLED"
	}
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && 'A' <= r && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// httpStatus is the HTTP status Google's REST APIs answer for a gRPC code
// (the mapping of google/rpc/code.proto).
func httpStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return 200
	case codes.Canceled:
		return 499
	case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
		return 400
	case codes.DeadlineExceeded:
		return 504
	case codes.NotFound:
		return 404
	case codes.AlreadyExists, codes.Aborted:
		return 409
	case codes.PermissionDenied:
		return 403
	case codes.ResourceExhausted:
		return 429
	case codes.Unimplemented:
		return 501
	case codes.Unavailable:
		return 503
	case codes.Unauthenticated:
		return 401
	}
	return 500
}

// restFace is the fake's REST face: an httptest server over the same store,
// started on first use and stopped by Close.
type restFace struct {
	once sync.Once
	srv  *httptest.Server
}

func (s *Server) rest() *httptest.Server {
	s.restFace.once.Do(func() {
		s.restFace.srv = httptest.NewServer(s.RESTHandler())
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
