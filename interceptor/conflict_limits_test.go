package interceptor_test

import (
	"math"
	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
)

// TestConflictDelayExtremes: the conflict schedule's Delay is
// never negative and never above its documented bounds, whatever n and r
// (NaN, ±Inf, out of [0, 1), huge or negative n).
func TestConflictDelayExtremes(t *testing.T) {
	t.Parallel()
	rs := []float64{0, 0.5, math.Nextafter(1, 0), 1, 2, -1, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}
	ns := []int{math.MinInt, -1, 0, 1, 2, 62, 63, 64, 1 << 20, math.MaxInt}
	for _, s := range []interceptor.ConflictBackoff{interceptor.ScaledConflicts, interceptor.SpreadConflicts, interceptor.DocumentedConflicts} {
		for _, n := range ns {
			for _, r := range rs {
				d := interceptor.ConflictDelay(s, n, 0, r)
				limit := 32*time.Second + time.Second // DocumentedConflicts: the default Backoff's Max
				if s != interceptor.DocumentedConflicts {
					limit = 30 * time.Second
				}
				if d < 0 || d > limit {
					t.Errorf("%v delay(%d, %v) = %v, want within [0, %v]", s, n, r, d, limit)
				}
			}
		}
	}
}
