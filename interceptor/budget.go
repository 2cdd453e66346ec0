package interceptor

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the retry budget (WithRetryBudget): retries may reach 20% of
// recent calls, plus 10 a second so that a process with few calls can retry.
const (
	DefaultBudgetRatio     = 0.2
	DefaultBudgetPerSecond = 10
)

// budgetBank is the most retries the ratio part of a budget saves up: it
// remembers the deposits of the last budgetBank/ratio calls (500 at the
// default 20%), which is what "recent" means.
const budgetBank = 100

// micro is the ratio bucket's unit: it counts millionths of a retry, so a
// ratio is kept to the nearest millionth and MinBudgetRatio is the smallest
// ratio above 0 it can count.
const micro = 1_000_000

// MinBudgetRatio is the smallest ratio above 0 WithRetryBudget accepts (one
// retry per million calls); a smaller one is refused, not rounded to 0.
const MinBudgetRatio = 1.0 / micro

// budget is a Retrier's retry budget, shared by all its calls, in the
// manner of gRPC's retry throttling (gRFC A6) and the SRE book's per-client
// retry budget: two token buckets.
//
//   - The ratio bucket: every call deposits ratio tokens when it starts (up
//     to budgetBank tokens); it starts full. With ratio 0 it is empty. Depositing is one atomic load
//     when the bucket is full (a healthy service) and reads no clock.
//   - The floor bucket: refills at perSecond tokens a second, up to one
//     second's worth (at least one token); it starts full. It is read only
//     when a retry is asked for, on the failure path.
//
// A retry takes a whole token from the floor bucket, or else from the ratio
// bucket; when neither has one the retry is refused. Under a full outage at a
// steady rate of R calls a second, retries are therefore held to about
// ratio*R + perSecond a second, after the saved-up tokens are spent.
type budget struct {
	ratio int64 // micro-tokens deposited per call
	bank  int64 // micro-tokens at most
	saved atomic.Int64

	perSecond float64
	floorCap  float64
	mu        sync.Mutex
	floor     float64
	last      time.Time
}

func newBudget(ratio, perSecond float64) *budget {
	b := &budget{
		ratio:     int64(math.Round(ratio * micro)),
		bank:      budgetBank * micro,
		perSecond: perSecond,
		floorCap:  math.Max(1, perSecond),
	}
	if b.ratio == 0 {
		b.bank = 0 // ratio 0: retries come from the per-second floor alone
	}
	b.saved.Store(b.bank)
	b.floor = b.floorCap
	return b
}

// deposit records one call. It reads no clock and allocates nothing.
func (b *budget) deposit() {
	for {
		v := b.saved.Load()
		if v >= b.bank || b.ratio == 0 {
			return
		}
		if b.saved.CompareAndSwap(v, min(v+b.ratio, b.bank)) {
			return
		}
	}
}

// withdraw takes a token for one retry at time now, and reports whether
// there was one.
func (b *budget) withdraw(now time.Time) bool {
	if b.perSecond > 0 {
		b.mu.Lock()
		if !b.last.IsZero() && now.After(b.last) {
			b.floor = math.Min(b.floorCap, b.floor+now.Sub(b.last).Seconds()*b.perSecond)
		}
		if b.last.IsZero() || now.After(b.last) {
			b.last = now
		}
		ok := b.floor >= 1
		if ok {
			b.floor--
		}
		b.mu.Unlock()
		if ok {
			return true
		}
	}
	for {
		v := b.saved.Load()
		if v < micro {
			return false
		}
		if b.saved.CompareAndSwap(v, v-micro) {
			return true
		}
	}
}

// WithRetryBudget sets the budget shared by a Retrier's calls (on by default,
// starting full): retries may reach ratio of recent calls (saving up at most
// 100) plus perSecond a second; a refused retry ends the call with its last
// error (Reason BudgetExhausted); conflict reruns spend none. ratio is 0 or in
// [MinBudgetRatio, 1], perSecond finite and >= 0, not both 0.
func WithRetryBudget(ratio, perSecond float64) Option {
	return func(c *config) {
		bad := false
		if !(ratio >= 0 && ratio <= 1) {
			c.fail("WithRetryBudget: ratio is %v; it must be in [0, 1] (0.2: retries may reach 20%% of calls)", ratio)
			bad = true
		}
		if ratio > 0 && ratio < MinBudgetRatio {
			c.fail("WithRetryBudget: ratio is %v, below the smallest the budget can count, %.6f (MinBudgetRatio: one retry per million calls); use 0 for no ratio part", ratio, MinBudgetRatio)
			bad = true
		}
		if !(perSecond >= 0) || math.IsInf(perSecond, 0) {
			c.fail("WithRetryBudget: perSecond is %v; it must be a finite number >= 0", perSecond)
			bad = true
		}
		if !bad && ratio == 0 && perSecond == 0 {
			c.fail("WithRetryBudget(0, 0) allows no retry at all: use WithMaxAttempts(1) for that, or WithoutRetryBudget() for no budget")
			bad = true
		}
		if bad {
			return
		}
		c.budgetRatio, c.budgetPerSecond, c.budgetOff = ratio, perSecond, false
	}
}

// WithoutRetryBudget turns the retry budget off, for where something else
// bounds retries (one client, a test), not in a fleet.
func WithoutRetryBudget() Option {
	return func(c *config) { c.budgetOff = true }
}
