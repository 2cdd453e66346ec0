package iamtest

import (
	"encoding/json"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

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
