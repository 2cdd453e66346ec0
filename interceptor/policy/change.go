package policy

import "cloud.google.com/go/iam/apiv1/iampb"

// runMutations runs one caller's mutations, in order, on p (its own copy
// of the policy), on the caller's goroutine (Batch.Apply).
func runMutations(p *iampb.Policy, muts []Mutation) (bool, error) {
	changed := false
	for j, m := range muts {
		c, err := m(p)
		if err != nil {
			return false, &mutationError{n: j + 1, err: err}
		}
		changed = changed || c
	}
	return changed, nil
}
