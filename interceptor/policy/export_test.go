package policy

// Pending returns how many Updates of resource are queued for the next
// read-modify-write (not yet in a batch).
func Pending(u *Updater, resource string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	if q := u.queues[resource]; q != nil {
		return len(q.pending)
	}
	return 0
}

// Busy reports whether a committer runs for resource.
func Busy(u *Updater, resource string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.queues[resource]
	return ok
}
