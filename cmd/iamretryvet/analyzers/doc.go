// Package analyzers holds iamretryvet's analyzers, for a multichecker or
// vet tool of your own (All), or one at a time. Each reports a way of
// calling the Google Cloud IAM API that defeats its retry guidance, and
// names the iamretry fix in one line.
//
// The analyzers know the IAM clients' functions and methods by their
// go/types identity (package path, receiver and name), so they need type
// information and work on code that compiles. They report only what the
// code shows in one function (or, for nestedowner, through the functions
// of one package): a value of unknown provenance is not reported.
//
// A line ending "//iamretryvet:ignore NAME reason" silences the analyzer
// NAME on that line (the line the report points at).
package analyzers

import "golang.org/x/tools/go/analysis"

// All is every analyzer of iamretryvet, in the order of its documentation:
// blindwrite, writeonlyretry, unwiredclient, gaxstacked, nestedowner,
// unsaferetry, fixedsleep, restlropoll.
var All = []*analysis.Analyzer{
	BlindWrite,
	WriteOnlyRetry,
	UnwiredClient,
	GAXStacked,
	NestedOwner,
	UnsafeRetry,
	FixedSleep,
	RESTLROPoll,
}
