package herd

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// clientRand returns client i's own random stream for seed: a PCG whose second
// seed word is the client index run through SplitMix64, so neighbouring
// clients get unrelated streams and no client's draws depend on another's.
func clientRand(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, splitmix64(uint64(i))))
}

// splitmix64 is the SplitMix64 finalizer: a bijective 64-bit mixer.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// percentile returns the nearest-rank p-th percentile (0 < p <= 1) of ds,
// sorting ds in place; it returns 0 for an empty slice.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	// ceil(p*n), with a little slack so 0.99*1000 is 990 and not 991.
	k := int(math.Ceil(p*float64(len(ds))-1e-9)) - 1
	return ds[max(0, min(k, len(ds)-1))]
}
