package role

// Pending returns how many Updates of name are queued for the next
// read-modify-write (not yet in a batch).
func Pending(u *Updater, name string) int { return u.core.Pending(name) }
