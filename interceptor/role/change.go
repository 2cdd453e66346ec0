package role

import (
	"slices"
	"strings"
	"unicode"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
)

// Change changes a custom role in place and reports whether it changed it.
// The Updater hands it a private copy of the role just read; it must not
// keep the role or touch it after returning. It may change Title,
// Description, IncludedPermissions and Stage only: a Change that touches
// another field (the name, the etag, deleted) fails the Update before
// anything is written.
//
// A Change must be idempotent: run on a role that already holds its
// change, it must change nothing and report false. The Updater reruns the
// changes on every fresh read (after a conflict, a transient failure or a
// write whose answer was lost) and relies on that to apply each change
// exactly once. Every Change of this package is idempotent.
//
// What is written is decided by comparing the role after the changes with
// the role read, not by the reports: the update_mask names each field whose
// value differs (included_permissions compared as a set), and nothing is
// written when none does. A Change's error fails the Update, wrapped
// (errors.Is works), before anything is written.
type Change func(r *adminpb.Role) (changed bool, err error)

// AddPermissions adds each permission the role does not hold yet, after
// those it holds, in the order given (a permission given twice is added
// once). It changes nothing when the role holds them all; none given
// changes nothing. An empty permission or one with white space is an error
// (INVALID_ARGUMENT) naming it; whether IAM knows a permission, and lets a
// custom role hold it, is IAM's to say: it refuses the write with its own
// error, which the Update returns at once.
func AddPermissions(permissions ...string) Change {
	perms, err := checkPermissions("AddPermissions", permissions)
	return func(r *adminpb.Role) (bool, error) {
		if err != nil {
			return false, err
		}
		changed := false
		for _, p := range perms {
			if !slices.Contains(r.IncludedPermissions, p) {
				r.IncludedPermissions = append(r.IncludedPermissions, p)
				changed = true
			}
		}
		return changed, nil
	}
}

// RemovePermissions removes each of the permissions the role holds, keeping
// the order of the rest. It changes nothing when the role holds none of
// them (removing a permission that is not there is no error); none given
// changes nothing. An empty permission or one with white space is an error
// (INVALID_ARGUMENT) naming it.
func RemovePermissions(permissions ...string) Change {
	perms, err := checkPermissions("RemovePermissions", permissions)
	return func(r *adminpb.Role) (bool, error) {
		if err != nil {
			return false, err
		}
		n := len(r.IncludedPermissions)
		r.IncludedPermissions = slices.DeleteFunc(r.IncludedPermissions, func(p string) bool { return slices.Contains(perms, p) })
		return len(r.IncludedPermissions) != n, nil
	}
}

// checkPermissions refuses an empty permission or one with white space,
// naming it, and returns the permissions without repeats.
func checkPermissions(fn string, permissions []string) ([]string, error) {
	var out []string
	for i, p := range permissions {
		switch {
		case p == "":
			return nil, invalid("%s: permission %d of %d is empty", fn, i+1, len(permissions))
		case strings.ContainsFunc(p, unicode.IsSpace):
			return nil, invalid("%s: permission %q contains white space", fn, p)
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// SetTitle sets the role's title; it changes nothing when the title is
// title already. "" clears it. IAM limits a title to 100 bytes and refuses
// a longer one with its own error (INVALID_ARGUMENT).
func SetTitle(title string) Change {
	return func(r *adminpb.Role) (bool, error) {
		if r.Title == title {
			return false, nil
		}
		r.Title = title
		return true, nil
	}
}

// SetDescription sets the role's description; it changes nothing when the
// description is description already. "" clears it. IAM limits a
// description to 256 bytes and refuses a longer one with its own error.
func SetDescription(description string) Change {
	return func(r *adminpb.Role) (bool, error) {
		if r.Description == description {
			return false, nil
		}
		r.Description = description
		return true, nil
	}
}

// SetStage sets the role's launch stage (adminpb.Role_ALPHA, BETA, GA,
// DEPRECATED, DISABLED, EAP); it changes nothing when the stage is stage
// already. A value that is none of the stages adminpb knows is an error
// (INVALID_ARGUMENT) naming it.
func SetStage(stage adminpb.Role_RoleLaunchStage) Change {
	_, known := adminpb.Role_RoleLaunchStage_name[int32(stage)]
	return func(r *adminpb.Role) (bool, error) {
		if !known {
			return false, invalid("SetStage: %d is not a launch stage (adminpb.Role_ALPHA, BETA, GA, DEPRECATED, DISABLED, EAP)", int32(stage))
		}
		if r.Stage == stage {
			return false, nil
		}
		r.Stage = stage
		return true, nil
	}
}
