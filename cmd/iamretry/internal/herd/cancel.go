package herd

import "context"

// cancelEvery is how many steps (events, clients set up) a simulation takes
// between looks at its context: a few hundred microseconds of work, so that
// a cancelled simulation stops at once for a person, while the look costs
// nothing measurable.
const cancelEvery = 1 << 12

// canceller looks at a context every cancelEvery steps.
type canceller struct{ steps uint32 }

// check counts one step and, every cancelEvery steps, returns ctx's error
// if it has ended.
func (c *canceller) check(ctx context.Context) error {
	c.steps++
	if c.steps%cancelEvery != 0 {
		return nil
	}
	return ctx.Err()
}
