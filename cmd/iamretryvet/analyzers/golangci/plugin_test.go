package golangci

import (
	"slices"
	"testing"

	"github.com/golangci/plugin-module-register/register"

	"github.com/iamretry/iamretry/cmd/iamretryvet/analyzers"
)

// TestPlugin checks what golangci-lint sees: the plugin "iamretryvet",
// registered on import, building every analyzer on type information.
func TestPlugin(t *testing.T) {
	newPlugin, err := register.GetPlugin("iamretryvet")
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	as, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(as, analyzers.All) {
		t.Errorf("BuildAnalyzers() = %v, want analyzers.All", as)
	}
	if m := p.GetLoadMode(); m != register.LoadModeTypesInfo {
		t.Errorf("GetLoadMode() = %q, want %q", m, register.LoadModeTypesInfo)
	}
}
