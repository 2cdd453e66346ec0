package iamtest

import (
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"
)

// Resource Manager's google.cloudresourcemanager.v1.ProjectIamPolicyError,
// the detail of its refusals of a project policy (its JSON, as users quote
// it: {"@type": "type.googleapis.com/google.cloudresourcemanager.v1.ProjectIamPolicyError",
// "type": "SOLO_MUST_INVITE_OWNERS", "member": "user:...", "role": "roles/owner"}).
// Its proto is not public: the fake builds the message at run time, with
// field numbers of its own (type 1, role 2, member 3); its JSON form is
// what a REST caller sees, and a gRPC caller sees an Any of that type URL.
// It is never registered in the global registry.
var projectIamPolicyError = func() protoreflect.MessageType {
	fd := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("fakeiam/google/cloudresourcemanager/v1/project_iam_policy_error.proto"),
		Package: proto.String("google.cloudresourcemanager.v1"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("ProjectIamPolicyError"),
			Field: []*descriptorpb.FieldDescriptorProto{
				{Name: proto.String("type"), JsonName: proto.String("type"), Number: proto.Int32(1), Type: descriptorpb.FieldDescriptorProto_TYPE_ENUM.Enum(), TypeName: proto.String(".google.cloudresourcemanager.v1.ProjectIamPolicyError.ErrorType"), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()},
				{Name: proto.String("role"), JsonName: proto.String("role"), Number: proto.Int32(2), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()},
				{Name: proto.String("member"), JsonName: proto.String("member"), Number: proto.Int32(3), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()},
			},
			EnumType: []*descriptorpb.EnumDescriptorProto{{
				Name: proto.String("ErrorType"),
				Value: []*descriptorpb.EnumValueDescriptorProto{
					{Name: proto.String("ERROR_TYPE_UNSPECIFIED"), Number: proto.Int32(0)},
					{Name: proto.String("SOLO_MUST_INVITE_OWNERS"), Number: proto.Int32(1)},
				},
			}},
		}},
	}
	file, err := protodesc.NewFile(fd, protoregistry.GlobalFiles)
	if err != nil {
		panic("iamtest: building ProjectIamPolicyError: " + err.Error())
	}
	return dynamicpb.NewMessageType(file.Messages().Get(0))
}()

// detailResolver resolves the Any details the fake writes: its own
// ProjectIamPolicyError, then the global registry.
type detailResolver struct{}

func (detailResolver) FindMessageByName(n protoreflect.FullName) (protoreflect.MessageType, error) {
	if n == projectIamPolicyError.Descriptor().FullName() {
		return projectIamPolicyError, nil
	}
	return protoregistry.GlobalTypes.FindMessageByName(n)
}

func (r detailResolver) FindMessageByURL(url string) (protoreflect.MessageType, error) {
	return r.FindMessageByName(protoreflect.FullName(url[strings.LastIndexByte(url, '/')+1:]))
}

func (detailResolver) FindExtensionByName(n protoreflect.FullName) (protoreflect.ExtensionType, error) {
	return protoregistry.GlobalTypes.FindExtensionByName(n)
}

func (detailResolver) FindExtensionByNumber(m protoreflect.FullName, f protoreflect.FieldNumber) (protoreflect.ExtensionType, error) {
	return protoregistry.GlobalTypes.FindExtensionByNumber(m, f)
}

// soloMustInviteOwners is Resource Manager's refusal to grant roles/owner
// to a user who has not accepted an invitation: INVALID_ARGUMENT "Request
// contains an invalid argument." with a ProjectIamPolicyError of type
// SOLO_MUST_INVITE_OWNERS and a google.rpc.BadRequest saying why.
func soloMustInviteOwners(member, role, why string) error {
	m := projectIamPolicyError.New()
	fields := m.Descriptor().Fields()
	m.Set(fields.ByName("type"), protoreflect.ValueOfEnum(1))
	m.Set(fields.ByName("role"), protoreflect.ValueOfString(role))
	m.Set(fields.ByName("member"), protoreflect.ValueOfString(member))
	detail, err := anypb.New(m.Interface())
	if err != nil {
		return status.Error(codes.InvalidArgument, "Request contains an invalid argument.")
	}
	br, _ := anypb.New(&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "policy.bindings.members", Description: why}}})
	sp := status.New(codes.InvalidArgument, "Request contains an invalid argument.").Proto()
	sp.Details = append(sp.Details, detail, br)
	return status.FromProto(sp).Err()
}
