package iamtest

import (
	"context"
	"crypto/sha1"
	"encoding/asn1"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// adminService serves the part of google.iam.admin.v1.IAM that the fake
// implements; the rest answers UNIMPLEMENTED through UnimplementedIAMServer.
type adminService struct {
	adminpb.UnimplementedIAMServer
	s *Server
}

// CreateServiceAccount creates projects/P/serviceAccounts/ID@P.iam.gserviceaccount.com.
func (a *adminService) CreateServiceAccount(_ context.Context, req *adminpb.CreateServiceAccountRequest) (*adminpb.ServiceAccount, error) {
	project, ok := strings.CutPrefix(req.GetName(), "projects/")
	if !ok || project == "" || project == "-" || strings.Contains(project, "/") {
		return nil, status.Errorf(codes.InvalidArgument, "invalid project name %q: expected projects/PROJECT_ID", req.GetName())
	}
	id := req.GetAccountId()
	if err := checkAccountID(id); err != nil {
		return nil, err
	}
	if err := checkAccountFields(req.GetServiceAccount()); err != nil {
		return nil, err
	}
	email := id + "@" + project + ".iam.gserviceaccount.com"
	now := a.s.now()
	_, reads := a.s.propagation()
	quota := a.s.fid().accountQuota

	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.checkProjectForAccountsLocked(project, "iam.serviceAccounts.create"); err != nil {
		return nil, err
	}
	if _, exists := st.accounts[email]; exists {
		return nil, status.Errorf(codes.AlreadyExists,
			"Service account %s already exists within project projects/%s.", id, project)
	}
	if st.countAccountsLocked(project) >= quota {
		return nil, accountQuotaExceeded()
	}
	sa := st.newAccountLocked(project, email)
	sa.DisplayName = req.GetServiceAccount().GetDisplayName()
	sa.Description = req.GetServiceAccount().GetDescription()
	st.accounts[email] = &account{sa: sa, created: now, readsLeft: reads}
	return proto.Clone(sa).(*adminpb.ServiceAccount), nil
}

// GetServiceAccount answers an account by email, unique ID or full name
// (project "-" allowed); a just-created account answers the propagation
// codes (see withPropagationCodes) while it propagates.
func (a *adminService) GetServiceAccount(_ context.Context, req *adminpb.GetServiceAccountRequest) (*adminpb.ServiceAccount, error) {
	now := a.s.now()
	delay, _ := a.s.propagation()
	cs := a.s.fid().propCodes
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := bareEmailRefusal(req.GetName()); err != nil {
		return nil, err
	}
	acc, err := st.readAccountLocked(req.GetName(), now, delay, cs)
	if err != nil {
		return nil, err
	}
	return proto.Clone(acc.sa).(*adminpb.ServiceAccount), nil
}

// Default and largest page sizes, as the page_size comments of
// google/iam/admin/v1/iam.proto give them: ListServiceAccounts 20 and 100,
// ListRoles and QueryGrantableRoles 300 and 1,000, QueryTestablePermissions
// 100 and 1,000. A larger page_size is capped (AIP-158: "coerced to the
// maximum"), not refused.
var (
	accountPages    = pageSizes{20, 100}
	rolePages       = pageSizes{300, 1000}
	permissionPages = pageSizes{100, 1000}
)

// pageSizes are a list method's default and largest page sizes.
type pageSizes struct{ def, max int }

// page cuts one page out of n items: the token is the decimal offset.
func (ps pageSizes) page(n int, size int32, token string) (from, to int, next string, err error) {
	if token != "" {
		from, err = strconv.Atoi(token)
		if err != nil || from < 0 || from > n {
			return 0, 0, "", status.Errorf(codes.InvalidArgument, "invalid page_token %q", token)
		}
	}
	if size < 0 {
		return 0, 0, "", status.Errorf(codes.InvalidArgument, "invalid page_size %d: it must not be negative", size)
	}
	sz := int(size)
	if sz == 0 {
		sz = ps.def
	}
	sz = min(sz, ps.max)
	to = min(from+sz, n)
	if to < n {
		next = strconv.Itoa(to)
	}
	return from, to, next, nil
}

// ListServiceAccounts lists a project's accounts by email, paged.
func (a *adminService) ListServiceAccounts(_ context.Context, req *adminpb.ListServiceAccountsRequest) (*adminpb.ListServiceAccountsResponse, error) {
	project, ok := strings.CutPrefix(req.GetName(), "projects/")
	if !ok || project == "" || project == "-" || strings.Contains(project, "/") {
		return nil, status.Errorf(codes.InvalidArgument, "invalid project name %q: expected projects/PROJECT_ID", req.GetName())
	}
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.checkProjectForAccountsLocked(project, "iam.serviceAccounts.list"); err != nil {
		return nil, err
	}
	var all []*adminpb.ServiceAccount
	for _, acc := range st.accounts {
		if acc.sa.ProjectId == project {
			all = append(all, acc.sa)
		}
	}
	slices.SortFunc(all, func(x, y *adminpb.ServiceAccount) int { return strings.Compare(x.Email, y.Email) })
	from, to, next, err := accountPages.page(len(all), req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	resp := &adminpb.ListServiceAccountsResponse{NextPageToken: next}
	for _, sa := range all[from:to] {
		resp.Accounts = append(resp.Accounts, proto.Clone(sa).(*adminpb.ServiceAccount))
	}
	return resp, nil
}

// DeleteServiceAccount removes an account with its keys and its policy
// (kept AccountUndeleteWindow for UndeleteServiceAccount), and
// turns every binding member serviceAccount:EMAIL that named it into
// deleted:serviceAccount:EMAIL?uid=UNIQUE_ID, as the comment of
// google.iam.v1.Binding.members documents ("An email address (plus unique
// identifier) representing a service account that has been recently
// deleted"). Each policy so changed gets a new etag.
func (a *adminService) DeleteServiceAccount(_ context.Context, req *adminpb.DeleteServiceAccountRequest) (*emptypb.Empty, error) {
	now := a.s.now()
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, err := st.lookupAsLocked(req.GetName(), "iam.serviceAccounts.delete")
	if err != nil {
		return nil, err
	}
	delete(st.accounts, acc.sa.Email)
	st.deletedAccounts[acc.sa.UniqueId] = &deletedAccount{acc: acc, policy: st.policies[acc.sa.Name], at: now}
	delete(st.policies, acc.sa.Name)
	delete(st.prev, acc.sa.Name)
	st.markDeletedLocked("serviceAccount:"+acc.sa.Email, "deleted:serviceAccount:"+acc.sa.Email+"?uid="+acc.sa.UniqueId, now)
	return &emptypb.Empty{}, nil
}

// markDeletedLocked replaces member by deleted in every stored policy.
// st.mu must be held.
func (st *state) markDeletedLocked(member, deleted string, now time.Time) {
	for key, p := range st.policies {
		if !slices.ContainsFunc(p.GetBindings(), func(b *iampb.Binding) bool { return slices.Contains(b.GetMembers(), member) }) {
			continue
		}
		next := proto.Clone(p).(*iampb.Policy)
		for _, b := range next.Bindings {
			for i, m := range b.Members {
				if m == member {
					b.Members[i] = deleted
				}
			}
		}
		next.Etag = st.nextEtagLocked()
		st.storeLocked(key, next, now)
	}
}

// keyValidBefore is the valid_before_time of minted keys: IAM's "never".
var keyValidBefore = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// maxUserManagedKeys is the most user-managed keys a service account may
// have: https://cloud.google.com/iam/quotas ("Service account keys per
// service account: 10"). One more is refused as keyLimitReached says.
const maxUserManagedKeys = 10

// CreateServiceAccountKey mints a new key on every call: a credentials file
// (JSON, the default type) or a PKCS#12 archive (TYPE_PKCS12_FILE), neither
// holding a usable private key. It answers FAILED_PRECONDITION past
// maxUserManagedKeys and while SetKeyCreationDisabled is on.
func (a *adminService) CreateServiceAccountKey(_ context.Context, req *adminpb.CreateServiceAccountKeyRequest) (*adminpb.ServiceAccountKey, error) {
	now := a.s.now()
	disabled, keyLimitQuota := a.s.fid().keysDisabled, a.s.fid().keyLimitQuota
	keyType := req.GetPrivateKeyType()
	if keyType == adminpb.ServiceAccountPrivateKeyType_TYPE_UNSPECIFIED {
		keyType = adminpb.ServiceAccountPrivateKeyType_TYPE_GOOGLE_CREDENTIALS_FILE
	}
	if keyType != adminpb.ServiceAccountPrivateKeyType_TYPE_GOOGLE_CREDENTIALS_FILE && keyType != adminpb.ServiceAccountPrivateKeyType_TYPE_PKCS12_FILE {
		return nil, status.Errorf(codes.InvalidArgument, "invalid private_key_type %v: expected TYPE_GOOGLE_CREDENTIALS_FILE or TYPE_PKCS12_FILE", keyType)
	}
	alg := req.GetKeyAlgorithm()
	if alg == adminpb.ServiceAccountKeyAlgorithm_KEY_ALG_UNSPECIFIED {
		alg = adminpb.ServiceAccountKeyAlgorithm_KEY_ALG_RSA_2048
	}

	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, err := st.lookupAsLocked(req.GetName(), "iam.serviceAccountKeys.create")
	if err != nil {
		return nil, err
	}
	if disabled {
		return nil, keyCreationDisabled(acc.sa.Name)
	}
	if len(acc.keys) >= maxUserManagedKeys {
		return nil, keyLimitReached(keyLimitQuota)
	}
	st.keySeq++
	sum := sha1.Sum([]byte(acc.sa.Name + "/keys/" + strconv.FormatUint(st.keySeq, 10)))
	keyID := hex.EncodeToString(sum[:])

	var data []byte
	if keyType == adminpb.ServiceAccountPrivateKeyType_TYPE_PKCS12_FILE {
		data = emptyPKCS12()
	} else {
		// A credentials file that looks like IAM's but holds no usable key.
		data, _ = json.Marshal(map[string]string{
			"type":           "service_account",
			"project_id":     acc.sa.ProjectId,
			"private_key_id": keyID,
			"private_key":    "-----BEGIN PRIVATE KEY-----\nZmFrZWlhbQ==\n-----END PRIVATE KEY-----\n",
			"client_email":   acc.sa.Email,
			"client_id":      acc.sa.UniqueId,
		})
	}
	key := &adminpb.ServiceAccountKey{
		Name:            acc.sa.Name + "/keys/" + keyID,
		PrivateKeyType:  keyType,
		KeyAlgorithm:    alg,
		PrivateKeyData:  data,
		ValidAfterTime:  timestamppb.New(now),
		ValidBeforeTime: timestamppb.New(keyValidBefore),
		KeyOrigin:       adminpb.ServiceAccountKeyOrigin_GOOGLE_PROVIDED,
		KeyType:         adminpb.ListServiceAccountKeysRequest_USER_MANAGED,
	}
	acc.keys = append(acc.keys, key)
	return proto.Clone(key).(*adminpb.ServiceAccountKey), nil
}

// keyCreationDisabled is IAM's answer while the organization policy
// constraint iam.disableServiceAccountKeyCreation is enforced.
func keyCreationDisabled(name string) error {
	return withDetails(status.New(codes.FailedPrecondition, "Key creation is not allowed on this service account."),
		&errdetails.PreconditionFailure{Violations: []*errdetails.PreconditionFailure_Violation{{
			Type: "constraints/iam.disableServiceAccountKeyCreation", Subject: name,
			Description: "Key creation is not allowed on this service account.",
		}}}).Err()
}

// emptyPKCS12 is a well-formed PKCS#12 archive (RFC 7292 PFX, version 3)
// whose authenticated safe holds no bag: the shape of IAM's P12 key file
// (password "notasecret", as the comment of TYPE_PKCS12_FILE says) without
// a key in it.
func emptyPKCS12() []byte {
	oidData := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	authSafe, _ := asn1.Marshal([]asn1.RawValue(nil)) // AuthenticatedSafe: SEQUENCE OF ContentInfo, empty
	octets, _ := asn1.Marshal(authSafe)               // OCTET STRING
	type contentInfo struct {
		ContentType asn1.ObjectIdentifier
		Content     asn1.RawValue // [0] EXPLICIT, built by hand
	}
	type pfx struct {
		Version  int
		AuthSafe contentInfo
	}
	out, _ := asn1.Marshal(pfx{Version: 3, AuthSafe: contentInfo{ContentType: oidData, Content: asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: octets}}})
	return out
}

// GetIamPolicy answers a service account's policy; the account must exist
// and be visible.
func (a *adminService) GetIamPolicy(_ context.Context, req *iampb.GetIamPolicyRequest) (*iampb.Policy, error) {
	return a.s.getPolicy(req.GetResource(), req.GetOptions().GetRequestedPolicyVersion(), a.s.accountReader())
}

// SetIamPolicy writes a service account's policy; the account must exist and
// be visible.
func (a *adminService) SetIamPolicy(_ context.Context, req *iampb.SetIamPolicyRequest) (*iampb.Policy, error) {
	return a.s.setPolicy(req, a.s.accountReader())
}

// TestIamPermissions answers every valid permission asked for on an existing,
// visible service account.
func (a *adminService) TestIamPermissions(_ context.Context, req *iampb.TestIamPermissionsRequest) (*iampb.TestIamPermissionsResponse, error) {
	return a.s.testPermissions(req, a.s.accountReader())
}
