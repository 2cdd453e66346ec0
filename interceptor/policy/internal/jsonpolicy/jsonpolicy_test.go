package jsonpolicy_test

import (
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/interceptor/policy/internal/jsonpolicy"
)

func full() *iampb.Policy {
	return &iampb.Policy{
		Version: 3,
		Etag:    []byte{0x07, 0x05, 0xff, 0x00, 0x3c},
		Bindings: []*iampb.Binding{
			{Role: "roles/viewer", Members: []string{"user:a@example.com", "serviceAccount:s@p.iam.gserviceaccount.com"}},
			{Role: "roles/editor", Members: []string{"group:g@example.com"}, Condition: &expr.Expr{
				Title: "until 2030", Description: "temporary", Expression: `request.time < timestamp("2030-01-01T00:00:00Z")`, Location: "here",
			}},
		},
		AuditConfigs: []*iampb.AuditConfig{{Service: "allServices", AuditLogConfigs: []*iampb.AuditLogConfig{
			{LogType: iampb.AuditLogConfig_DATA_READ, ExemptedMembers: []string{"user:a@example.com"}},
			{LogType: iampb.AuditLogConfig_ADMIN_READ},
		}}},
	}
}

func TestRoundTripIsLossless(t *testing.T) {
	for _, dst := range []any{new(crm.Policy), new(iam.Policy)} {
		want := full()
		if err := jsonpolicy.FromProto(want, dst); err != nil {
			t.Fatal(err)
		}
		got, err := jsonpolicy.ToProto(dst)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, want) {
			t.Errorf("%T: round trip\n got %v\nwant %v", dst, got, want)
		}
	}
}

func TestMask(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		want  string
	}{{nil, ""}, {[]string{"bindings", "etag"}, "bindings,etag"}, {[]string{"audit_configs"}, "auditConfigs"}} {
		got, err := jsonpolicy.Mask(&fieldmaskpb.FieldMask{Paths: tc.paths})
		if err != nil || got != tc.want {
			t.Errorf("Mask(%v) = %q, %v; want %q", tc.paths, got, err, tc.want)
		}
	}
}
