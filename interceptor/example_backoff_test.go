package interceptor_test

import (
	"fmt"

	"github.com/iamretry/iamretry/interceptor"
)

// The IAM guidance's schedule: before retry n, wait min(2^n + random_fraction,
// maximum_backoff) seconds. Delay is pure, so the schedule can be printed for
// the lowest (r = 0) and highest (r -> 1) random fraction.
func ExampleBackoff_Delay() {
	b := interceptor.DefaultBackoff()
	for n := range 7 {
		fmt.Printf("retry %d: wait %v to %v\n", n, b.Delay(n, 0), b.Delay(n, 0.999))
	}
	// Output:
	// retry 0: wait 1s to 1.999s
	// retry 1: wait 2s to 2.999s
	// retry 2: wait 4s to 4.999s
	// retry 3: wait 8s to 8.999s
	// retry 4: wait 16s to 16.999s
	// retry 5: wait 32s to 32s
	// retry 6: wait 32s to 32s
}
