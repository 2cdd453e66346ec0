package fakeiam

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
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
	if !validAccountID(id) {
		return nil, status.Errorf(codes.InvalidArgument,
			"invalid account_id %q: it must be 6 to 30 lowercase letters, digits or hyphens, start with a letter and not end with a hyphen", id)
	}
	email := id + "@" + project + ".iam.gserviceaccount.com"
	now := a.s.now()
	_, reads := a.s.propagation()

	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, exists := st.accounts[email]; exists {
		return nil, status.Errorf(codes.AlreadyExists,
			"Service account %s already exists within project projects/%s.", id, project)
	}
	st.idSeq++
	uid := uniqueID(st.idSeq)
	sa := &adminpb.ServiceAccount{
		Name:           accountName(project, email),
		ProjectId:      project,
		UniqueId:       uid,
		Email:          email,
		DisplayName:    req.GetServiceAccount().GetDisplayName(),
		Description:    req.GetServiceAccount().GetDescription(),
		Oauth2ClientId: uid,
		Etag:           st.nextEtagLocked(),
	}
	st.accounts[email] = &account{sa: sa, created: now, readsLeft: reads}
	return proto.Clone(sa).(*adminpb.ServiceAccount), nil
}

// GetServiceAccount answers an account by email, unique ID or full name
// (project "-" allowed); a just-created account may answer NOT_FOUND while it
// propagates.
func (a *adminService) GetServiceAccount(_ context.Context, req *adminpb.GetServiceAccountRequest) (*adminpb.ServiceAccount, error) {
	now := a.s.now()
	delay, _ := a.s.propagation()
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, err := st.readAccountLocked(req.GetName(), now, delay)
	if err != nil {
		return nil, err
	}
	return proto.Clone(acc.sa).(*adminpb.ServiceAccount), nil
}

// Default and largest page sizes of ListServiceAccounts and ListRoles.
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// page cuts one page out of n items: the token is the decimal offset.
func page(n int, size int32, token string) (from, to int, next string, err error) {
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
		sz = defaultPageSize
	}
	sz = min(sz, maxPageSize)
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
	var all []*adminpb.ServiceAccount
	for _, acc := range st.accounts {
		if acc.sa.ProjectId == project {
			all = append(all, acc.sa)
		}
	}
	slices.SortFunc(all, func(x, y *adminpb.ServiceAccount) int { return strings.Compare(x.Email, y.Email) })
	from, to, next, err := page(len(all), req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	resp := &adminpb.ListServiceAccountsResponse{NextPageToken: next}
	for _, sa := range all[from:to] {
		resp.Accounts = append(resp.Accounts, proto.Clone(sa).(*adminpb.ServiceAccount))
	}
	return resp, nil
}

// DeleteServiceAccount removes an account with its keys and its policy.
func (a *adminService) DeleteServiceAccount(_ context.Context, req *adminpb.DeleteServiceAccountRequest) (*emptypb.Empty, error) {
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, err := st.lookupLocked(req.GetName())
	if err != nil {
		return nil, err
	}
	delete(st.accounts, acc.sa.Email)
	delete(st.policies, acc.sa.Name)
	return &emptypb.Empty{}, nil
}

// keyValidBefore is the valid_before_time of minted keys: IAM's "never".
var keyValidBefore = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// CreateServiceAccountKey mints a new key on every call.
func (a *adminService) CreateServiceAccountKey(_ context.Context, req *adminpb.CreateServiceAccountKeyRequest) (*adminpb.ServiceAccountKey, error) {
	now := a.s.now()
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, err := st.lookupLocked(req.GetName())
	if err != nil {
		return nil, err
	}
	st.keySeq++
	sum := sha1.Sum([]byte(acc.sa.Name + "/keys/" + strconv.FormatUint(st.keySeq, 10)))
	keyID := hex.EncodeToString(sum[:])

	keyType := req.GetPrivateKeyType()
	if keyType == adminpb.ServiceAccountPrivateKeyType_TYPE_UNSPECIFIED {
		keyType = adminpb.ServiceAccountPrivateKeyType_TYPE_GOOGLE_CREDENTIALS_FILE
	}
	alg := req.GetKeyAlgorithm()
	if alg == adminpb.ServiceAccountKeyAlgorithm_KEY_ALG_UNSPECIFIED {
		alg = adminpb.ServiceAccountKeyAlgorithm_KEY_ALG_RSA_2048
	}
	// A credentials file that looks like IAM's but holds no usable key.
	data, _ := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     acc.sa.ProjectId,
		"private_key_id": keyID,
		"private_key":    "-----BEGIN PRIVATE KEY-----\nZmFrZWlhbQ==\n-----END PRIVATE KEY-----\n",
		"client_email":   acc.sa.Email,
		"client_id":      acc.sa.UniqueId,
	})
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
