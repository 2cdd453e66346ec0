// Command iamretryvet reports, in Go source, the retry mistakes that
// iamretry exists to prevent when calling the Google Cloud IAM API: a blind
// SetIamPolicy, a write retried alone, a client the Retrier never reaches,
// stacked gax retries, nested retry owners, an unsafe call replayed by Do,
// fixed-sleep retry loops, and a REST client's operation polled with gax's
// retries on.
//
// Run it on its own or as a vet tool:
//
//	iamretryvet [-json] ./...
//	go vet -vettool=$(which iamretryvet) ./...
//
// On its own it exits 3 when it reports, 0 when clean (with -json: 0, and
// the findings as JSON on stdout). Each analyzer is documented in package
// analyzers; a line ending "//iamretryvet:ignore NAME reason" silences NAME
// there.
package main

import (
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/iamretry/iamretry/cmd/iamretryvet/analyzers"
)

func main() { multichecker.Main(analyzers.All...) }
