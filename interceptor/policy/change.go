package policy

import (
	"sync"

	"cloud.google.com/go/iam/apiv1/iampb"
)

// change is one caller's mutations as the read-modify-write sees them. It is
// the only thing the two layers share: the batching layer (coalesce.go)
// makes it and may withdraw it (leave); the read-modify-write (rmw.go) runs
// it (apply) while it has not been withdrawn. Neither layer calls the other
// through it.
type change struct {
	muts []Mutation

	mu   sync.Mutex // held while the mutations run
	left bool       // withdrawn: never run again; guarded by mu
}

// leave withdraws the change: it is never applied again. It returns at once
// unless the change's mutations are running, and then as soon as they
// return.
func (c *change) leave() {
	c.mu.Lock()
	c.left = true
	c.mu.Unlock()
}

// withdrawn reports whether leave was called.
func (c *change) withdrawn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.left
}

// applied is what running a change's mutations on a policy made.
type applied struct {
	ran      bool // false: the change was withdrawn, nothing ran
	changed  bool
	err      error // a Mutation's error
	panicked any   // a Mutation's panic value
	goexit   bool  // a Mutation called runtime.Goexit
}

// apply runs the change's mutations on p unless it was withdrawn. They run
// on a goroutine of their own, so that a Mutation that panics or calls
// runtime.Goexit (t.FailNow in a test) ends only that goroutine: its caller
// gets the panic or the Goexit, every other caller of the batch carries on.
func (c *change) apply(p *iampb.Policy) applied {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left {
		return applied{}
	}
	done := make(chan applied, 1)
	go func() {
		a := applied{ran: true}
		returned := false
		defer func() {
			if !returned {
				if r := recover(); r != nil {
					a = applied{ran: true, panicked: r}
				} else {
					a = applied{ran: true, goexit: true}
				}
			}
			done <- a
		}()
		a.changed, a.err = runMutations(p, c.muts)
		returned = true
	}()
	return <-done
}

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
