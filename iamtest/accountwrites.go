package iamtest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Service-account writes beyond create and delete: Patch, Update, Disable,
// Enable, Undelete, and the field limits they share with Create.

// Field limits of a service account (the comments of
// google.iam.admin.v1.ServiceAccount: display_name "The maximum length is
// 100 UTF-8 bytes", description "The maximum length is 256 UTF-8 bytes").
const (
	maxDisplayName = 100
	maxDescription = 256
)

// AccountUndeleteWindow is how long a deleted service account can be
// undeleted (the comment of UndeleteServiceAccount: "IAM permanently removes
// the service account 30 days later").
const AccountUndeleteWindow = 30 * 24 * time.Hour

// checkAccountFields refuses a display name or description over IAM's
// limits, with IAM's messages.
func checkAccountFields(sa *adminpb.ServiceAccount) error {
	if n := len(sa.GetDisplayName()); n > maxDisplayName {
		return status.Errorf(codes.InvalidArgument, "The display_name length (%d) is longer than the maximum allowed length %d.", n, maxDisplayName)
	}
	if n := len(sa.GetDescription()); n > maxDescription {
		return status.Errorf(codes.InvalidArgument, "The description length (%d) is longer than the maximum allowed length %d.", n, maxDescription)
	}
	return nil
}

// deletedAccount is a deleted service account kept for UndeleteServiceAccount.
type deletedAccount struct {
	acc    *account
	policy *iampb.Policy // its policy when it was deleted, or nil
	at     time.Time
}

// PatchServiceAccount changes the fields update_mask names (display_name,
// description; the mask is required) of the account service_account.name
// designates, and moves its etag.
func (a *adminService) PatchServiceAccount(_ context.Context, req *adminpb.PatchServiceAccountRequest) (*adminpb.ServiceAccount, error) {
	in := req.GetServiceAccount()
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		return nil, status.Error(codes.InvalidArgument, "update_mask is required: name the fields to change (display_name, description)")
	}
	var display, desc bool
	for _, p := range paths {
		switch snakeCase(p) {
		case "display_name":
			display = true
		case "description":
			desc = true
		default:
			return nil, status.Errorf(codes.InvalidArgument, "invalid update_mask path %q: the paths may be display_name and description", p)
		}
	}
	return a.updateAccount(in, display, desc)
}

// UpdateServiceAccount (deprecated by IAM for PatchServiceAccount) sets the
// display_name of the account name designates; other fields, the
// description too, are ignored (google/iam/admin/v1/iam.proto: "You can
// update only the `display_name` field").
func (a *adminService) UpdateServiceAccount(_ context.Context, in *adminpb.ServiceAccount) (*adminpb.ServiceAccount, error) {
	return a.updateAccount(in, true, false)
}

// updateAccount checks in's fields, then sets the display_name (display)
// and the description (desc) of the account in.name designates and moves
// its etag: the write both PatchServiceAccount and UpdateServiceAccount do.
func (a *adminService) updateAccount(in *adminpb.ServiceAccount, display, desc bool) (*adminpb.ServiceAccount, error) {
	if err := checkAccountFields(in); err != nil {
		return nil, err
	}
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, err := st.lookupAsLocked(in.GetName(), "iam.serviceAccounts.update")
	if err != nil {
		return nil, err
	}
	next := proto.Clone(acc.sa).(*adminpb.ServiceAccount)
	if display {
		next.DisplayName = in.GetDisplayName()
	}
	if desc {
		next.Description = in.GetDescription()
	}
	next.Etag = st.nextEtagLocked()
	acc.sa = next
	return proto.Clone(next).(*adminpb.ServiceAccount), nil
}

// setDisabled implements Enable and Disable: both are idempotent ("If the
// service account is already enabled, then this method has no effect").
func (a *adminService) setDisabled(name, perm string, disabled bool) (*emptypb.Empty, error) {
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, err := st.lookupAsLocked(name, perm)
	if err != nil {
		return nil, err
	}
	if acc.sa.Disabled != disabled {
		next := proto.Clone(acc.sa).(*adminpb.ServiceAccount)
		next.Disabled = disabled
		next.Etag = st.nextEtagLocked()
		acc.sa = next
	}
	return &emptypb.Empty{}, nil
}

// DisableServiceAccount sets the account's disabled field.
func (a *adminService) DisableServiceAccount(_ context.Context, req *adminpb.DisableServiceAccountRequest) (*emptypb.Empty, error) {
	return a.setDisabled(req.GetName(), "iam.serviceAccounts.disable", true)
}

// EnableServiceAccount clears the account's disabled field.
func (a *adminService) EnableServiceAccount(_ context.Context, req *adminpb.EnableServiceAccountRequest) (*emptypb.Empty, error) {
	return a.setDisabled(req.GetName(), "iam.serviceAccounts.enable", false)
}

// UndeleteServiceAccount restores an account deleted less than
// AccountUndeleteWindow ago, named by its unique ID
// (projects/-/serviceAccounts/UNIQUE_ID): its keys and its policy come
// back, and every deleted:serviceAccount:EMAIL?uid=UNIQUE_ID member turns
// back into serviceAccount:EMAIL. Undeleting an account that is not deleted
// answers it as restored (the fake's choice: IAM does not document it).
// FAILED_PRECONDITION when another account has taken its email since;
// PERMISSION_DENIED for a unique ID no account has (or had within the
// window), as gcloud's reference says IAM answers.
func (a *adminService) UndeleteServiceAccount(_ context.Context, req *adminpb.UndeleteServiceAccountRequest) (*adminpb.UndeleteServiceAccountResponse, error) {
	_, uid, err := parseAccountName(req.GetName())
	if err != nil {
		return nil, err
	}
	if strings.Contains(uid, "@") {
		return nil, status.Errorf(codes.InvalidArgument,
			"invalid name %q: undelete needs the account's unique ID, projects/-/serviceAccounts/UNIQUE_ID", req.GetName())
	}
	now := a.s.now()
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, acc := range st.accounts {
		if acc.sa.UniqueId == uid {
			return &adminpb.UndeleteServiceAccountResponse{RestoredAccount: proto.Clone(acc.sa).(*adminpb.ServiceAccount)}, nil
		}
	}
	d, ok := st.deletedAccounts[uid]
	if !ok || !now.Before(d.at.Add(AccountUndeleteWindow)) {
		// gcloud's reference (gcloud iam service-accounts undelete): "If the
		// service account does not exist, this command returns a
		// PERMISSION_DENIED error."
		delete(st.deletedAccounts, uid)
		return nil, permissionDenied("iam.googleapis.com", "iam.serviceAccounts.undelete", req.GetName(),
			"Permission 'iam.serviceAccounts.undelete' denied on resource '"+req.GetName()+"' (or it may not exist).")
	}
	sa := d.acc.sa
	if _, taken := st.accounts[sa.Email]; taken {
		return nil, status.Errorf(codes.FailedPrecondition,
			"Service account %s cannot be undeleted: an account with the same email exists.", sa.Email)
	}
	delete(st.deletedAccounts, uid)
	st.accounts[sa.Email] = d.acc
	if d.policy != nil {
		st.policies[sa.Name] = d.policy
	}
	st.markDeletedLocked("deleted:serviceAccount:"+sa.Email+"?uid="+sa.UniqueId, "serviceAccount:"+sa.Email, now)
	return &adminpb.UndeleteServiceAccountResponse{RestoredAccount: proto.Clone(sa).(*adminpb.ServiceAccount)}, nil
}

// MaxServiceAccountsPerProject is the default of SetServiceAccountQuota
// (https://cloud.google.com/iam/quotas: 100 service accounts per project).
const MaxServiceAccountsPerProject = 100

// accountQuotaRetryDelay is the google.rpc.RetryInfo delay IAM sends with
// "Maximum number of service accounts on project reached.": a day and a
// second (issue 31's audit). A retrier whose deadline is sooner ends the
// call at once.
const accountQuotaRetryDelay = 86401 * time.Second

// accountQuotaExceeded is IAM's answer past the quota (RESOURCE_EXHAUSTED,
// HTTP 429, with the message users report and a RetryInfo of a day).
func accountQuotaExceeded() error {
	return withDetails(status.New(codes.ResourceExhausted, "Maximum number of service accounts on project reached."),
		&errdetails.RetryInfo{RetryDelay: durationpb.New(accountQuotaRetryDelay)}).Err()
}

// keyLimitReached is IAM's refusal of an account's 11th user-managed key:
// with SetKeyLimitExhausted, the quota answer of the accounts' limit
// (RESOURCE_EXHAUSTED, a RetryInfo of a day and a second, the delay
// kubeflow/pipelines#348 shows); otherwise FAILED_PRECONDITION.
func keyLimitReached(exhausted bool) error {
	if !exhausted {
		return status.Error(codes.FailedPrecondition, "Precondition check failed.")
	}
	return withDetails(status.New(codes.ResourceExhausted, "Maximum number of keys on account reached."),
		&errdetails.RetryInfo{RetryDelay: durationpb.New(accountQuotaRetryDelay)}).Err()
}

// countAccountsLocked counts the live accounts of project.
func (st *state) countAccountsLocked(project string) int {
	n := 0
	for _, acc := range st.accounts {
		if acc.sa.ProjectId == project {
			n++
		}
	}
	return n
}

// SetServiceAccountQuota sets how many service accounts a project may hold:
// one more CreateServiceAccount answers RESOURCE_EXHAUSTED (HTTP 429)
// "Maximum number of service accounts on project reached.", with a
// google.rpc.RetryInfo of 86,401 s, as IAM does.
// Default: MaxServiceAccountsPerProject (100). It panics if n < 1.
func (s *Server) SetServiceAccountQuota(n int) {
	if n < 1 {
		panic(fmt.Sprintf("iamtest: SetServiceAccountQuota(%d): the quota must be at least 1", n))
	}
	s.cfgMu.Lock()
	s.cfg.fid.accountQuota = n
	s.cfgMu.Unlock()
}

// SetCallerPermissions makes TestIamPermissions on resource answer only the
// permissions asked for that are among perms: the caller holds exactly
// perms there (none when perms is empty). Default (and after
// ResetCallerPermissions): the caller holds every well-formed permission. A
// resource that does not exist answers the empty set whatever this says, as
// google/iam/v1/iam_policy.proto documents. It panics on a permission that
// is not SERVICE.RESOURCE.VERB.
func (s *Server) SetCallerPermissions(resource string, perms ...string) {
	for _, p := range perms {
		if !validPermission(p) {
			panic(fmt.Sprintf("iamtest: SetCallerPermissions: permission %q is not SERVICE.RESOURCE.VERB", p))
		}
	}
	st := s.state
	st.mu.Lock()
	st.heldPerms[st.canonicalLocked(resource)] = append([]string{}, perms...)
	st.mu.Unlock()
}

// ResetCallerPermissions restores the default on resource: the caller holds
// every well-formed permission.
func (s *Server) ResetCallerPermissions(resource string) {
	st := s.state
	st.mu.Lock()
	delete(st.heldPerms, st.canonicalLocked(resource))
	st.mu.Unlock()
}
