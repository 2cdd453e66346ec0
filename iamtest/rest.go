package iamtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// RESTHandler returns the fake's REST face as an http.Handler (the one
// RESTEndpoint serves: the same store, faults and call log), to serve
// behind middleware of your own, such as a handler that drops or delays
// requests at the HTTP level. Serving it is the caller's: Close does not
// stop servers it was handed to.
func (s *Server) RESTHandler() http.Handler {
	return &restHandler{s: s, routes: s.restRoutes()}
}

// restHandler is the fake's REST face: an http.Handler that serves the
// same store, through the same fault layer and call log, as the gRPC
// services, with the HTTP/JSON transcoding of the google.api.http rules of
// every method of the method table (methodtable.go), read from the
// generated descriptors: the path binds the template's variables, the body
// the rule's body field ("*": the whole request), the query the other
// fields when the body is not the whole request (google/api/http.proto).
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
// after the handler committed: the request is called over the fake's own
// connection, as a gRPC client's is. Errors are written as Google's REST APIs
// write them: the HTTP status of the code and
// {"error": {"code", "message", "status", "details"}}, details (such as a
// google.rpc.RetryInfo) in their JSON form with "@type", and for a request
// that is not a GAPIC REST client's ($alt=json;enum-encoding=int) the
// legacy "errors" array [{"message", "domain": "global", "reason"}] (see
// legacyReason) too. The admin
// methods the fake does not serve (:signBlob, :signJwt,
// iamPolicies:queryAuditableServices, iamPolicies:lintPolicy without a
// condition), and every other method of the services it registers, answer
// 501 UNIMPLEMENTED through the fault layer and the call log, as over gRPC;
// a request that is no route of IAM's at all answers 404 with an HTML
// body, as Google's front end does (writeNoRoute).
type restHandler struct {
	s      *Server
	routes []restRoute
}

// restRoute is one google.api.http rule of a method of the table.
type restRoute struct {
	verb   string
	segs   []string // the template's segments: a literal, "*" or "**"
	custom string   // the custom verb after ':' on the last segment
	vars   []pathVar
	body   string // the rule's body: "" none, "*" the whole request, or a field
	method methodInfo
}

// pathVar is a variable of a URL template: the request field it sets
// (dotted through messages) and the template segments it spans (to < 0:
// to the end, for "**").
type pathVar struct {
	field    string
	from, to int
}

// restRoutes are the routes of every rule of the method table, those whose
// template holds "**" (the IAM mixin on any resource) last, since the
// others are more specific.
func (s *Server) restRoutes() []restRoute {
	var routes, wide []restRoute
	for _, mi := range methodTable {
		for _, rule := range mi.rules {
			verb, tmpl := httpPattern(rule)
			rt, err := parseTemplate(tmpl)
			if err != nil || verb == "" {
				panic(fmt.Sprintf("iamtest: the HTTP rule of %s: %q: %v", mi.name, tmpl, err))
			}
			rt.verb, rt.body, rt.method = verb, rule.GetBody(), mi
			if slices.Contains(rt.segs, "**") {
				wide = append(wide, rt)
			} else {
				routes = append(routes, rt)
			}
		}
	}
	return append(routes, wide...)
}

// parseTemplate parses a google.api.http URL template
// ("/v1/{resource=projects/*}:getIamPolicy") into its segments, variables
// and custom verb.
func parseTemplate(tmpl string) (restRoute, error) {
	var rt restRoute
	t, ok := strings.CutPrefix(tmpl, "/")
	if !ok {
		return rt, fmt.Errorf("no leading /")
	}
	if i := strings.LastIndexByte(t, ':'); i > strings.LastIndexByte(t, '}') && i > strings.LastIndexByte(t, '/') {
		t, rt.custom = t[:i], t[i+1:]
	}
	for t != "" {
		if t[0] == '{' {
			end := strings.IndexByte(t, '}')
			if end < 0 {
				return rt, fmt.Errorf("unclosed variable")
			}
			field, pattern, ok := strings.Cut(t[1:end], "=")
			if !ok {
				pattern = "*"
			}
			v := pathVar{field: field, from: len(rt.segs)}
			rt.segs = append(rt.segs, strings.Split(pattern, "/")...)
			v.to = len(rt.segs)
			if slices.Contains(rt.segs[v.from:], "**") {
				v.to = -1
			}
			rt.vars = append(rt.vars, v)
			t = strings.TrimPrefix(t[end+1:], "/")
			continue
		}
		seg, rest, _ := strings.Cut(t, "/")
		rt.segs = append(rt.segs, seg)
		t = rest
	}
	return rt, nil
}

// match reports whether the request path's segments (escaped) and custom
// verb are this route's, and returns its variables' values: every escape
// decoded but %2F, as google/api/http.proto says a server decodes a
// variable of several segments (so that a deny policy's URL-encoded
// attachment point is one segment, whether a client sent %252F or %2F).
func (rt *restRoute) match(segs []string, custom string) ([]string, bool) {
	if custom != rt.custom {
		return nil, false
	}
	wide := len(rt.segs) > 0 && rt.segs[len(rt.segs)-1] == "**"
	if len(segs) < len(rt.segs) || (!wide && len(segs) != len(rt.segs)) {
		return nil, false
	}
	dec := make([]string, len(segs))
	for i, seg := range segs {
		d, ok := unescapeKeepSlash(seg)
		if !ok || d == "" {
			return nil, false
		}
		dec[i] = d
	}
	for i, p := range rt.segs {
		if p != "*" && p != "**" && p != dec[i] {
			return nil, false
		}
	}
	vals := make([]string, len(rt.vars))
	for i, v := range rt.vars {
		to := v.to
		if to < 0 {
			to = len(dec)
		}
		vals[i] = strings.Join(dec[v.from:to], "/")
	}
	return vals, true
}

// unescapeKeepSlash decodes the percent-escapes of seg except %2F (written
// %2F whatever its case).
func unescapeKeepSlash(seg string) (string, bool) {
	if !strings.Contains(seg, "%") {
		return seg, true
	}
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		if seg[i] != '%' {
			b.WriteByte(seg[i])
			continue
		}
		if i+2 >= len(seg) {
			return "", false
		}
		v, err := strconv.ParseUint(seg[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		if v == '/' {
			b.WriteString("%2F")
		} else {
			b.WriteByte(byte(v))
		}
		i += 2
	}
	return b.String(), true
}

// splitPath splits an escaped URL path into its segments and custom verb.
func splitPath(escaped string) ([]string, string) {
	p := strings.TrimLeft(escaped, "/") // a GAPIC endpoint with a trailing slash sends "//v1/..."
	custom := ""
	if i := strings.LastIndexByte(p, ':'); i > strings.LastIndexByte(p, '/') {
		p, custom = p[:i], p[i+1:]
	}
	return strings.Split(p, "/"), custom
}

// restIn reads the JSON of the discovery clients (names as lowerCamelCase,
// enums as names) and of GAPIC REST clients (enums as numbers).
var restIn = protojson.UnmarshalOptions{DiscardUnknown: true}

func (h *restHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs, custom := splitPath(r.URL.EscapedPath())
	var (
		route *restRoute
		vals  []string
	)
	for i := range h.routes {
		if h.routes[i].verb != r.Method {
			continue
		}
		if v, ok := h.routes[i].match(segs, custom); ok {
			route, vals = &h.routes[i], v
			break
		}
	}
	if route == nil {
		writeNoRoute(w, r)
		return
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(route.method.desc.Input().FullName())
	if err != nil {
		writeRESTError(w, r, status.Errorf(codes.Internal, "iamtest: request type of %s: %v", route.method.name, err))
		return
	}
	req := mt.New().Interface()
	if route.body != "" {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeRESTError(w, r, status.Errorf(codes.InvalidArgument, "iamtest: reading the body: %v", err))
			return
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			target, err := bodyTarget(req, route.body)
			if err != nil {
				writeRESTError(w, r, err)
				return
			}
			body = fixFieldMasks(body, target.ProtoReflect().Descriptor())
			if name, at, ok := unknownJSONName(body, target.ProtoReflect().Descriptor()); ok {
				writeRESTError(w, r, unknownNameError(name, at))
				return
			}
			if err := restIn.Unmarshal(body, target); err != nil {
				writeRESTError(w, r, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received. %v", err))
				return
			}
		}
	}
	query := r.URL.Query()
	var selected fieldTree
	if f := query.Get("fields"); f != "" {
		var err error
		if selected, err = parseFields(f); err != nil {
			writeRESTError(w, r, err)
			return
		}
	}
	// google/api/http.proto: the fields not bound by the path are query
	// parameters when the body is not the whole request.
	if route.body != "*" || h.s.fid().queryBindsBody {
		if err := setQuery(req.ProtoReflect(), query); err != nil {
			writeRESTError(w, r, err)
			return
		}
	}
	for i, v := range route.vars { // the path wins over the body and the query
		setField(req.ProtoReflect(), v.field, vals[i])
	}

	out, ok := h.s.callREST(w, r, route.method, req)
	if !ok {
		return
	}
	if selected != nil {
		out = selectFields(out, selected)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(out)
}

// callREST answers the JSON of what the method answers for req, called
// over the fake's own connection (so through the fault layer and the call
// log, as a gRPC client's call), with r's attemptHeader passed on as
// metadata. On an error it writes the REST error to w and answers false.
func (s *Server) callREST(w http.ResponseWriter, r *http.Request, m methodInfo, req proto.Message) ([]byte, bool) {
	ctx := r.Context()
	if v := r.Header.Get(attemptHeader); v != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, attemptHeader, v)
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(m.desc.Output().FullName())
	if err != nil {
		writeRESTError(w, r, status.Errorf(codes.Internal, "iamtest: answer type of %s: %v", m.name, err))
		return nil, false
	}
	resp := mt.New().Interface()
	if err := s.conn.Invoke(ctx, string(m.name), req, resp); err != nil {
		if s.isClosed() {
			err = status.Error(codes.Unavailable, "iamtest: the server is closed")
		}
		writeRESTError(w, r, err)
		return nil, false
	}
	out, err := protojson.Marshal(resp)
	if err != nil {
		writeRESTError(w, r, status.Errorf(codes.Internal, "iamtest: encoding the answer: %v", err))
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

// writeRESTError writes err as Google's REST APIs do, in the form r's client
// reads: a GAPIC REST client, which asks with $alt=json;enum-encoding=int,
// gets {code, message, status, details} (gax's apierror reads that body
// strictly, and an unknown "errors" would cost it the details); other
// clients (the discovery ones) also get the legacy "errors" array that
// googleapi.Error prints.
func writeRESTError(w http.ResponseWriter, r *http.Request, err error) {
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
		Errors  []legacy          `json:"errors,omitempty"`
		Status  string            `json:"status"`
		Details []json.RawMessage `json:"details,omitempty"`
	}
	code := httpStatus(st.Code())
	b := body{Code: code, Message: st.Message(), Status: restStatusName(st.Code()), Details: details}
	if !gapicREST(r) {
		b.Errors = []legacy{{Message: st.Message(), Domain: "global", Reason: legacyReason(st.Code())}}
	}
	out, _ := json.Marshal(struct {
		Error body `json:"error"`
	}{b})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(out)
}

// writeNoRoute answers a request that is no route of IAM's as Google's
// front end does: 404 with an HTML page, not a JSON error (nothing was
// called: no fault applies and no call is logged).
func writeNoRoute(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.WriteHeader(http.StatusNotFound)
	_, _ = fmt.Fprintf(w, `<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <title>Error 404 (Not Found)!!1</title>
  <p><b>404.</b> <ins>That’s an error.</ins>
  <p>The requested URL <code>%s</code> was not found on this server.  <ins>That’s all we know.</ins>
`, html.EscapeString(r.URL.Path))
}

// gapicREST reports whether r comes from a GAPIC REST client: its
// $alt system parameter asks for enum numbers.
func gapicREST(r *http.Request) bool {
	return strings.Contains(r.URL.Query().Get("$alt"), "enum-encoding=int")
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
// operations. Errors are written as Google's REST APIs write them to each
// client: {code, message, status, details} to a GAPIC REST client (so gax's
// apierror reads the details: Reason, ...), with the legacy "errors" array
// googleapi.Error prints to the others. A method the fake does not serve
// answers 501 (through the call log); a request that is no route of IAM's
// at all, 404 with an HTML body, as Google's front end answers it. Point a discovery client or a GAPIC REST client at
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
