// Package herd is a deterministic discrete-event simulator of the thundering
// herd that Google's IAM "Retry failed requests" guidance warns about: many
// clients that fail together and, without jitter, retry together in
// synchronized waves.
//
// [Simulate] models N clients calling one server that is down for an outage
// and can take only so many calls per 100 ms tick afterwards; [SimulateContention]
// models N clients running read-modify-write on one IAM policy, where a write
// with a stale etag fails with ABORTED and the whole read-modify-write is rerun.
// [Table] and [Plot] render results for people.
//
// A retry strategy is a plain delay function ([Strategy]); the package imports
// none of the project's public packages, the CLI adapts them. The simulators
// run in virtual time over a priority queue: no goroutines, no sleeps, no wall
// clock. The package runs its own event queue rather than the project's
// virtual clock (internal/vclock) because it schedules millions of events
// without a goroutine for any of them, which a clock that parks one goroutine
// per sleeper cannot do. A long simulation looks at its context every few
// thousand events, so a cancelled one stops at once. Every client draws from
// its own random stream derived from the seed, so a (config, strategy) pair
// gives the same result on every run and machine.
//
// # The thundering herd
//
// [Simulate]'s server: a call at time t fails if t < Outage or if t's tick
// has already taken Capacity calls; otherwise it succeeds. A client: calls;
// on its n-th failure (n from 0) it draws r, computes wait = s.Delay(n, r)
// (or s.After(n, time since its first failure, r)) and calls again after
// the wait, unless the wait would end more than Deadline after its first
// failure, in which case it gives up at once. Calls at the same instant are
// served in the order they were scheduled.
//
// # Contention on one policy
//
// In [SimulateContention] a client reads (getting the policy's etag), and
// Service later its write with that etag arrives: it lands if no other
// write landed in between, and bumps the etag; otherwise it fails with
// ABORTED and the client waits s.Delay(n, r) for its n-th conflict (n from
// 0; s.After(n, time since its first conflict, r) when set) and reruns the
// whole read-modify-write, unless the wait would end more than Deadline
// after its first conflict, in which case it gives up. Events at the same
// instant are handled in the order they were scheduled.
//
// # Plots
//
// [Plot]'s image is 10 x 7 inches: a title, then two panels sharing the
// time axis (seconds) and a legend beside them, never over the data. The
// top panel shows every line over its full range: the synchronized waves
// of a strategy without jitter. The bottom panel zooms in on calls up to
// about three times the server's capacity, or up to the highest retry peak
// of the spread-out strategies if that is higher (a strategy is
// synchronized, not spread out, if at least half the clients retried in
// one tick), rounded up to a round number, so the jittered strategies can
// be told apart; its title says what it clips. When all results share one
// scenario the title states it, the outage is shaded and the server's
// capacity is drawn as a dashed line.
package herd
