// Package jsonpolicy converts the Policy types of the google.golang.org/api
// discovery clients to iampb.Policy and back, through their JSON form: the
// discovery types are generated from the same google.iam.v1 messages, with
// the same JSON names (etag as base64, version, bindings with their
// conditions, audit configs with their exempted members), so the round trip
// keeps every field both sides know.
package jsonpolicy

import (
	"encoding/json"
	"fmt"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

var in = protojson.UnmarshalOptions{DiscardUnknown: true}

// ToProto converts a discovery Policy (any type that marshals to
// google.iam.v1.Policy's JSON) to an iampb.Policy.
func ToProto(p any) (*iampb.Policy, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("iamretry: encoding %T: %w", p, err)
	}
	out := new(iampb.Policy)
	if err := in.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("iamretry: converting %T to iampb.Policy: %w", p, err)
	}
	return out, nil
}

// FromProto fills dst, a pointer to a discovery Policy, from p.
func FromProto(p *iampb.Policy, dst any) error {
	b, err := protojson.Marshal(p)
	if err != nil {
		return fmt.Errorf("iamretry: encoding the policy: %w", err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("iamretry: converting iampb.Policy to %T: %w", dst, err)
	}
	return nil
}

// Mask returns the JSON form of an update mask ("bindings,etag"), "" for
// none.
func Mask(m *fieldmaskpb.FieldMask) (string, error) {
	if len(m.GetPaths()) == 0 {
		return "", nil
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("iamretry: encoding the update mask: %w", err)
	}
	var s string
	err = json.Unmarshal(b, &s)
	return s, err
}

// SetRequest fills dst, a pointer to a discovery Policy, from req's policy
// and returns the JSON form of req's update mask: what a discovery
// SetIamPolicyRequest carries.
func SetRequest(req *iampb.SetIamPolicyRequest, dst any) (mask string, err error) {
	if err := FromProto(req.GetPolicy(), dst); err != nil {
		return "", err
	}
	return Mask(req.GetUpdateMask())
}
