package iamtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// How the REST face reads a request as Google's front end does: a JSON name
// that is no field is refused, the fields= system parameter selects the
// fields of the answer, and query parameters are bound to the fields of a
// body: "*" method only when SetRESTQueryBindsBodyFields says so.

// SetRESTQueryBindsBodyFields chooses whether, on the REST face, a query
// parameter naming a request field is bound to it on a method whose whole
// request is the body (body: "*", such as :setIamPolicy and :getIamPolicy).
// google/api/http.proto says such a method has no query parameters; what
// Google's front end does with one is unverified. Default: off, such
// parameters are ignored. Methods without a body (GET, DELETE) and with a
// field body (PATCH of a role) bind them either way.
func (s *Server) SetRESTQueryBindsBodyFields(on bool) {
	s.setFid(func(f *fidelity) { f.queryBindsBody = on })
}

// wellKnownJSON are the message types whose JSON form is not an object of
// their fields: their values are not checked for unknown names.
var wellKnownJSON = map[protoreflect.FullName]bool{
	"google.protobuf.Any": true, "google.protobuf.Struct": true, "google.protobuf.Value": true,
	"google.protobuf.ListValue": true, "google.protobuf.FieldMask": true, "google.protobuf.Timestamp": true,
	"google.protobuf.Duration":    true,
	"google.protobuf.StringValue": true, "google.protobuf.BytesValue": true, "google.protobuf.BoolValue": true,
	"google.protobuf.Int32Value": true, "google.protobuf.Int64Value": true, "google.protobuf.UInt32Value": true,
	"google.protobuf.UInt64Value": true, "google.protobuf.FloatValue": true, "google.protobuf.DoubleValue": true,
}

// unknownJSONName returns the first name in the JSON object body that is no
// field (by JSON or proto name) of md, with the path of the object that
// holds it ("" at the top, "policy.bindings[0]" below), in the order of
// the body. ok is false when every name is a field, or when body is not a
// JSON object (protojson reports that).
func unknownJSONName(body []byte, md protoreflect.MessageDescriptor) (name, at string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", "", false
	}
	return unknownIn(v, md, "")
}

func unknownIn(v any, md protoreflect.MessageDescriptor, at string) (string, string, bool) {
	obj, isObj := v.(map[string]any)
	if !isObj {
		return "", "", false
	}
	for _, key := range sortedJSONKeys(obj) {
		fd := md.Fields().ByJSONName(key)
		if fd == nil {
			fd = md.Fields().ByName(protoreflect.Name(key))
		}
		if fd == nil {
			return key, at, true
		}
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			continue
		}
		if fd.IsMap() {
			vd := fd.MapValue()
			if vd.Kind() != protoreflect.MessageKind || wellKnownJSON[vd.Message().FullName()] {
				continue
			}
			m, _ := obj[key].(map[string]any)
			for _, k := range sortedJSONKeys(m) {
				if n, a, ok := unknownIn(m[k], vd.Message(), join(at, key)+"["+k+"]"); ok {
					return n, a, ok
				}
			}
			continue
		}
		if wellKnownJSON[fd.Message().FullName()] {
			continue
		}
		if fd.IsList() {
			list, _ := obj[key].([]any)
			for i, e := range list {
				if n, a, ok := unknownIn(e, fd.Message(), fmt.Sprintf("%s[%d]", join(at, key), i)); ok {
					return n, a, ok
				}
			}
			continue
		}
		if n, a, ok := unknownIn(obj[key], fd.Message(), join(at, key)); ok {
			return n, a, ok
		}
	}
	return "", "", false
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// sortedJSONKeys returns m's keys in order, for a deterministic answer.
func sortedJSONKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// unknownNameError is the front end's refusal of a name that is no field:
// 400 "Invalid JSON payload received. Unknown name "NAME" at 'PATH':
// Cannot find field." with a google.rpc.BadRequest naming the path.
func unknownNameError(name, at string) error {
	msg := fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", name)
	if at != "" {
		msg = fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", name, at)
	}
	return withDetails(status.New(codes.InvalidArgument, msg),
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: at, Description: msg}}}).Err()
}

// fieldTree is a parsed fields= selection: each selected name, with the
// selection below it (nil: the whole value).
type fieldTree map[string]fieldTree

// parseFields parses the partial-response syntax of Google's APIs
// (https://cloud.google.com/apis/docs/system-parameters, fields):
// "a,b/c,d(e,f)".
func parseFields(s string) (fieldTree, error) {
	p := &fieldsParser{s: s}
	t, err := p.list()
	if err == nil && p.i != len(s) {
		err = fmt.Errorf("unexpected %q at offset %d", s[p.i], p.i)
	}
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "Invalid field selection %q: %v", s, err)
	}
	return t, nil
}

type fieldsParser struct {
	s string
	i int
}

func (p *fieldsParser) list() (fieldTree, error) {
	t := fieldTree{}
	for {
		if err := p.item(t); err != nil {
			return nil, err
		}
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return t, nil
	}
}

func (p *fieldsParser) item(t fieldTree) error {
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(",()", rune(p.s[p.i])) {
		p.i++
	}
	path := strings.TrimSpace(p.s[start:p.i])
	if path == "" {
		return fmt.Errorf("empty field name at offset %d", start)
	}
	var sub fieldTree
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		var err error
		if sub, err = p.list(); err != nil {
			return err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return fmt.Errorf("missing ) at offset %d", p.i)
		}
		p.i++
	}
	names := strings.Split(path, "/")
	node := t
	for i, n := range names {
		if n == "" {
			return fmt.Errorf("empty field name in %q", path)
		}
		last := i == len(names)-1
		child, seen := node[n]
		switch {
		case last && sub == nil:
			node[n] = nil // the whole value
		case last:
			if seen && child == nil {
				return nil // already whole
			}
			if child == nil {
				child = fieldTree{}
				node[n] = child
			}
			for k, v := range sub {
				child[k] = v
			}
		default:
			if seen && child == nil {
				return nil
			}
			if child == nil {
				child = fieldTree{}
				node[n] = child
			}
			node = child
		}
	}
	return nil
}

// selectFields keeps in the JSON answer out only the fields t selects
// (through arrays: the selection applies to each element).
func selectFields(out []byte, t fieldTree) []byte {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return out
	}
	b, err := json.Marshal(applyFields(v, t))
	if err != nil {
		return out
	}
	return b
}

func applyFields(v any, t fieldTree) any {
	switch x := v.(type) {
	case map[string]any:
		kept := map[string]any{}
		for k, sub := range t {
			if val, ok := x[k]; ok {
				if sub == nil {
					kept[k] = val
				} else {
					kept[k] = applyFields(val, sub)
				}
			}
		}
		return kept
	case []any:
		for i, e := range x {
			x[i] = applyFields(e, t)
		}
		return x
	}
	return v
}
