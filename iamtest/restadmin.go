package iamtest

import (
	"context"
	"encoding/json"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// adminRoute builds one transcoded route of google.iam.admin.v1.IAM.
// path is the URL pattern ("*" one segment) up to the custom verb; body is
// the body field ("*" the whole request, "" none); name is the field the
// path's resource name goes to (dotted through messages, "" none); trim
// drops the path's last segment from the name (a collection).
func adminRoute[Req proto.Message, Resp any](verb, path, custom string, method Method, body, name string, trim bool, f func(context.Context, Req) (Resp, error)) restRoute {
	return restRoute{
		verb: verb, path: strings.Split(path, "/"), custom: custom, method: method,
		newReq: func() proto.Message {
			var z Req
			return z.ProtoReflect().New().Interface()
		},
		bodyField: body, nameField: name, trimLast: trim,
		call: func(ctx context.Context, r any) (any, error) { return f(ctx, r.(Req)) },
	}
}

// adminRESTRoutes are the HTTP rules of google/iam/admin/v1/iam.proto
// (google.api.http of each method) beyond the service-account routes of
// restRoutes, and those of the methods left unserved, which answer 501.
func adminRESTRoutes(adm *adminService) []restRoute {
	var routes []restRoute
	const sa = "v1/projects/*/serviceAccounts/*"
	routes = append(routes,
		adminRoute("PUT", sa, "", MethodUpdateServiceAccount, "*", "name", false, adm.UpdateServiceAccount),
		adminRoute("PATCH", sa, "", MethodPatchServiceAccount, "*", "service_account.name", false, adm.PatchServiceAccount),
		adminRoute("POST", sa, "undelete", MethodUndeleteServiceAccount, "*", "name", false, adm.UndeleteServiceAccount),
		adminRoute("POST", sa, "enable", MethodEnableServiceAccount, "*", "name", false, adm.EnableServiceAccount),
		adminRoute("POST", sa, "disable", MethodDisableServiceAccount, "*", "name", false, adm.DisableServiceAccount),
		adminRoute("GET", sa+"/keys", "", MethodListServiceAccountKeys, "", "name", true, adm.ListServiceAccountKeys),
		adminRoute("GET", sa+"/keys/*", "", MethodGetServiceAccountKey, "", "name", false, adm.GetServiceAccountKey),
		adminRoute("POST", sa+"/keys", "upload", MethodUploadServiceAccountKey, "*", "name", true, adm.UploadServiceAccountKey),
		adminRoute("DELETE", sa+"/keys/*", "", MethodDeleteServiceAccountKey, "", "name", false, adm.DeleteServiceAccountKey),
		adminRoute("POST", sa+"/keys/*", "disable", MethodDisableServiceAccountKey, "*", "name", false, adm.DisableServiceAccountKey),
		adminRoute("POST", sa+"/keys/*", "enable", MethodEnableServiceAccountKey, "*", "name", false, adm.EnableServiceAccountKey),
		adminRoute("POST", "v1/roles", "queryGrantableRoles", MethodQueryGrantableRoles, "*", "", false, adm.QueryGrantableRoles),
		adminRoute("POST", "v1/permissions", "queryTestablePermissions", MethodQueryTestablePermissions, "*", "", false, adm.QueryTestablePermissions),
		adminRoute("GET", "v1/roles", "", MethodListRoles, "", "", false, adm.ListRoles),
		adminRoute("GET", "v1/roles/*", "", MethodGetRole, "", "name", false, adm.GetRole),
	)
	for _, parent := range []string{"v1/projects/*", "v1/organizations/*"} {
		routes = append(routes,
			adminRoute("GET", parent+"/roles", "", MethodListRoles, "", "parent", true, adm.ListRoles),
			adminRoute("POST", parent+"/roles", "", MethodCreateRole, "*", "parent", true, adm.CreateRole),
			adminRoute("GET", parent+"/roles/*", "", MethodGetRole, "", "name", false, adm.GetRole),
			adminRoute("PATCH", parent+"/roles/*", "", MethodUpdateRole, "role", "name", false, adm.UpdateRole),
			adminRoute("DELETE", parent+"/roles/*", "", MethodDeleteRole, "", "name", false, adm.DeleteRole),
			adminRoute("POST", parent+"/roles/*", "undelete", MethodUndeleteRole, "*", "name", false, adm.UndeleteRole),
		)
	}
	// Unserved: 501 through the fault layer and the call log, as gRPC's
	// UNIMPLEMENTED is.
	routes = append(routes,
		adminRoute("POST", sa, "signBlob", methodSignBlob, "*", "name", false, adm.SignBlob),
		adminRoute("POST", sa, "signJwt", methodSignJwt, "*", "name", false, adm.SignJwt),
		adminRoute("POST", "v1/iamPolicies", "lintPolicy", methodLintPolicy, "*", "", false, adm.LintPolicy),
		adminRoute("POST", "v1/iamPolicies", "queryAuditableServices", methodQueryAuditableServices, "*", "", false, adm.QueryAuditableServices),
	)
	return routes
}

// setField sets the string field at a dotted proto path of m (such as
// service_account.name), making the messages on the way.
func setField(m protoreflect.Message, path, v string) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(p))
		if fd == nil || fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() {
			return
		}
		m = m.Mutable(fd).Message()
	}
	setString(m, parts[len(parts)-1], v)
}

// bodyTarget is the message a route's JSON body fills: the request itself
// for "*", else its message field body.
func bodyTarget(req proto.Message, body string) (proto.Message, error) {
	if body == "*" {
		return req, nil
	}
	m := req.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(body))
	if fd == nil || fd.Kind() != protoreflect.MessageKind {
		return nil, status.Errorf(codes.Internal, "iamtest: route body field %q", body)
	}
	return m.Mutable(fd).Message().Interface(), nil
}

// fixFieldMasks rewrites the google.protobuf.FieldMask fields at the top of
// a JSON body given with proto names ("display_name", as Terraform sends
// it) into the lowerCamelCase form protojson reads, so both are accepted as
// Google's front end accepts them. A body it cannot read is returned as it
// is, for protojson to report.
func fixFieldMasks(body []byte, md protoreflect.MessageDescriptor) []byte {
	var masks []protoreflect.FieldDescriptor
	for i := 0; i < md.Fields().Len(); i++ {
		fd := md.Fields().Get(i)
		if fd.Kind() == protoreflect.MessageKind && fd.Message().FullName() == "google.protobuf.FieldMask" {
			masks = append(masks, fd)
		}
	}
	if len(masks) == 0 {
		return body
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return body
	}
	changed := false
	for _, fd := range masks {
		for _, key := range []string{fd.JSONName(), string(fd.Name())} {
			var s string
			if raw, ok := top[key]; !ok || json.Unmarshal(raw, &s) != nil {
				continue
			}
			top[key], _ = json.Marshal(camelPaths(s))
			changed = true
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(top)
	if err != nil {
		return body
	}
	return out
}

// camelPaths turns "display_name,description" into "displayName,description".
func camelPaths(s string) string {
	paths := strings.Split(s, ",")
	for i, p := range paths {
		var b strings.Builder
		up := false
		for _, r := range strings.TrimSpace(p) {
			if r == '_' {
				up = true
				continue
			}
			if up && 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			up = false
			b.WriteRune(r)
		}
		paths[i] = b.String()
	}
	return strings.Join(paths, ",")
}
