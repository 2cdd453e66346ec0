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
package herd
