package policy

// Pending returns how many Updates of resource are queued for the next
// read-modify-write (not yet in a batch).
func Pending(u *Updater, resource string) int { return u.core.Pending(resource) }

// Busy reports whether a batch of resource runs or Updates of it are
// queued.
func Busy(u *Updater, resource string) bool { return u.core.Busy(resource) }
