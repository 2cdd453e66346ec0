package analyzers_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/iamretry/iamretry/cmd/iamretryvet/analyzers"
)

// TestAnalyzers runs each analyzer over its corpus in testdata (a module
// of its own that uses this repository and the real cloud.google.com/go
// and google.golang.org/api clients, from the module cache): every
// report is marked "// want", every other case is a program it must not
// report.
func TestAnalyzers(t *testing.T) {
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a        *analysis.Analyzer
		patterns []string
	}{
		{analyzers.BlindWrite, []string{"./blindwrite"}},
		{analyzers.WriteOnlyRetry, []string{"./writeonlyretry"}},
		{analyzers.UnwiredClient, []string{"./unwiredclient/..."}},
		{analyzers.GAXStacked, []string{"./gaxstacked"}},
		{analyzers.NestedOwner, []string{"./nestedowner/..."}},
		{analyzers.UnsafeRetry, []string{"./unsaferetry"}},
		{analyzers.FixedSleep, []string{"./fixedsleep"}},
	} {
		t.Run(c.a.Name, func(t *testing.T) {
			analysistest.Run(t, dir, c.a, c.patterns...)
		})
	}
}

// TestAll checks the contract of All: the seven analyzers, by name, in
// order, each valid for a driver.
func TestAll(t *testing.T) {
	want := []string{"blindwrite", "writeonlyretry", "unwiredclient", "gaxstacked", "nestedowner", "unsaferetry", "fixedsleep"}
	if len(analyzers.All) != len(want) {
		t.Fatalf("All has %d analyzers, want %d", len(analyzers.All), len(want))
	}
	for i, a := range analyzers.All {
		if a.Name != want[i] {
			t.Errorf("All[%d] is %q, want %q", i, a.Name, want[i])
		}
	}
	if err := analysis.Validate(analyzers.All); err != nil {
		t.Fatal(err)
	}
}
