package analyzers_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/iamretry/iamretry/cmd/iamretryvet/analyzers"
)

// every runs each analyzer of All on the pass it is given, as itself (its
// name for the ignore directive), reporting and keeping facts through that
// pass: one load of the corpus serves them all (a load type-checks the
// clients' whole dependency graph from source, which the race detector
// makes slow).
var every = &analysis.Analyzer{
	Name:      "every",
	Doc:       "every analyzer of iamretryvet, on one pass",
	FactTypes: analyzers.NestedOwner.FactTypes,
	Run: func(pass *analysis.Pass) (any, error) {
		for _, a := range analyzers.All {
			p := *pass
			p.Analyzer = a
			if _, err := a.Run(&p); err != nil {
				return nil, err
			}
		}
		return nil, nil
	},
}

// TestAnalyzers runs every analyzer over the corpus in testdata (a module
// of its own that uses this repository and the real cloud.google.com/go
// and google.golang.org/api clients, from the module cache), one package
// per analyzer: every report (of any analyzer) and every fact is marked
// "// want"; every other case is a program none may report.
func TestAnalyzers(t *testing.T) {
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, every, "./...")
}

// TestAll checks the contract of All: the eight analyzers, by name, in
// order, each valid for a driver.
func TestAll(t *testing.T) {
	want := []string{"blindwrite", "writeonlyretry", "unwiredclient", "gaxstacked", "nestedowner", "unsaferetry", "fixedsleep", "restlropoll"}
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
