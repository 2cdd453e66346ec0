package iamtest

import (
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
)

// The checks below panic with a message naming the control and the value it
// cannot honour: a control given such a value is a bug in the test.

func mustMethod(control string, m Method) {
	if !knownMethods[m] {
		panic(fmt.Sprintf("iamtest: %s: method %q is not one the fake serves (use a Method constant)", control, string(m)))
	}
}

func mustEtagWrite(control string, m Method) {
	if m != AnyMethod && !isEtagWrite(m) {
		panic(fmt.Sprintf("iamtest: %s: method %q is not a SetIamPolicy method, UpdateRole, UpdatePolicy or DeletePolicy", control, string(m)))
	}
}

func mustFailCode(control string, code codes.Code) {
	if code == codes.OK {
		panic(fmt.Sprintf("iamtest: %s: code OK is not an error", control))
	}
	if code > codes.Unauthenticated {
		panic(fmt.Sprintf("iamtest: %s: code %d is not a gRPC code", control, uint32(code)))
	}
}

func mustCount(control string, n int) {
	if n < 0 {
		panic(fmt.Sprintf("iamtest: %s: count %d is negative", control, n))
	}
}

func mustRate(control string, rate float64) {
	if !(rate >= 0 && rate <= 1) {
		panic(fmt.Sprintf("iamtest: %s: rate %v is outside [0, 1]", control, rate))
	}
}

func mustDuration(control string, d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("iamtest: %s: duration %v is negative", control, d))
	}
}
