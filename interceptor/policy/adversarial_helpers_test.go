package policy_test

import (
	"runtime"

	gax "github.com/googleapis/gax-go/v2"
)

type gaxCallOption = gax.CallOption

func goexit() { runtime.Goexit() }
