package iamtest

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// withDenyREST serves the HTTP/JSON transcoding of google.iam.v2.Policies
// and of its operations' GetOperation, as the google.api.http rules of
// google/iam/v2/policy.proto and the client's url_template give them, and
// hands every other request to next:
//
//	GET    /v2/{parent=policies/*/*}              ListPolicies
//	POST   /v2/{parent=policies/*/*}              CreatePolicy (body: policy)
//	GET    /v2/{name=policies/*/*/*}              GetPolicy
//	PUT    /v2/{policy.name=policies/*/*/*}       UpdatePolicy (body: policy)
//	DELETE /v2/{name=policies/*/*/*}              DeletePolicy
//	GET    /v2/{name=policies/*/*/*/operations/*} GetOperation
func (s *Server) withDenyREST(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		segs, ok := denyPath(r.URL.EscapedPath())
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		s.serveDenyREST(w, r, segs)
	})
}

// denyPath splits a /v2/policies/... path into its segments after "v2",
// decoded as http.proto says a server decodes a variable of several
// segments ("The server side does the reverse decoding, except "%2F" and
// "%2f" are left unchanged", google/api/http.proto): every escape but %2F,
// which stays, so that the URL-encoded attachment point is one segment and
// the name is the same whether a client sent %252F (the GAPIC and discovery
// clients, which escape the name's %) or %2F (a request written by hand).
func denyPath(escaped string) ([]string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(escaped, "/"), "v2/policies/")
	if !ok {
		return nil, false
	}
	segs := append([]string{"policies"}, strings.Split(rest, "/")...)
	for i, seg := range segs {
		d, ok := unescapeKeepSlash(seg)
		if !ok || d == "" {
			return nil, false
		}
		segs[i] = d
	}
	return segs, true
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

// serveDenyREST routes one request of the deny face.
func (s *Server) serveDenyREST(w http.ResponseWriter, r *http.Request, segs []string) {
	name := strings.Join(segs, "/")
	d := &denyService{s: s}
	o := &operationsService{s: s}
	var (
		method Method
		req    proto.Message
		body   proto.Message // where the JSON body goes
		call   func(ctx context.Context, req any) (any, error)
	)
	switch {
	case len(segs) == 3 && r.Method == http.MethodGet:
		q := &iamv2pb.ListPoliciesRequest{Parent: name}
		method, req = MethodListPolicies, q
		call = func(ctx context.Context, x any) (any, error) {
			return d.ListPolicies(ctx, x.(*iamv2pb.ListPoliciesRequest))
		}
	case len(segs) == 3 && r.Method == http.MethodPost:
		q := &iamv2pb.CreatePolicyRequest{Parent: name, Policy: &iamv2pb.Policy{}}
		method, req, body = MethodCreatePolicy, q, q.Policy
		call = func(ctx context.Context, x any) (any, error) {
			return d.CreatePolicy(ctx, x.(*iamv2pb.CreatePolicyRequest))
		}
	case len(segs) == 4 && r.Method == http.MethodGet:
		method, req = MethodGetPolicy, &iamv2pb.GetPolicyRequest{Name: name}
		call = func(ctx context.Context, x any) (any, error) { return d.GetPolicy(ctx, x.(*iamv2pb.GetPolicyRequest)) }
	case len(segs) == 4 && r.Method == http.MethodPut:
		q := &iamv2pb.UpdatePolicyRequest{Policy: &iamv2pb.Policy{}}
		method, req, body = MethodUpdatePolicy, q, q.Policy
		call = func(ctx context.Context, x any) (any, error) {
			return d.UpdatePolicy(ctx, x.(*iamv2pb.UpdatePolicyRequest))
		}
	case len(segs) == 4 && r.Method == http.MethodDelete:
		method, req = MethodDeletePolicy, &iamv2pb.DeletePolicyRequest{Name: name}
		call = func(ctx context.Context, x any) (any, error) {
			return d.DeletePolicy(ctx, x.(*iamv2pb.DeletePolicyRequest))
		}
	case len(segs) == 6 && segs[4] == "operations" && r.Method == http.MethodGet:
		method, req = MethodGetOperation, &longrunningpb.GetOperationRequest{Name: name}
		call = func(ctx context.Context, x any) (any, error) {
			return o.GetOperation(ctx, x.(*longrunningpb.GetOperationRequest))
		}
	default:
		writeRESTError(w, status.Errorf(codes.NotFound, "iamtest: no method for %s %s", r.Method, r.URL.Path))
		return
	}
	if body != nil {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			writeRESTError(w, status.Errorf(codes.InvalidArgument, "iamtest: reading the body: %v", err))
			return
		}
		if len(strings.TrimSpace(string(raw))) > 0 {
			if err := restIn.Unmarshal(raw, body); err != nil {
				writeRESTError(w, status.Errorf(codes.InvalidArgument, "Invalid JSON payload received. %v", err))
				return
			}
		}
	}
	if err := setQuery(req.ProtoReflect(), r.URL.Query()); err != nil {
		writeRESTError(w, err)
		return
	}
	if up, ok := req.(*iamv2pb.UpdatePolicyRequest); ok {
		up.Policy.Name = name // the path wins over the body
	}

	out, ok := s.callREST(w, r, method, req, call)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(out)
}
