// Package golangci registers iamretryvet's analyzers as the golangci-lint
// module plugin "iamretryvet". Name this package in your custom build's
// .custom-gcl.yml (module github.com/iamretry/iamretry/cmd/iamretryvet,
// import github.com/iamretry/iamretry/cmd/iamretryvet/analyzers/golangci)
// and enable the linter "iamretryvet" (type: module) in .golangci.yml. It
// takes no settings.
package golangci

import (
	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/iamretry/iamretry/cmd/iamretryvet/analyzers"
)

func init() { register.Plugin("iamretryvet", New) }

// New returns the plugin: every analyzer of analyzers.All, on type
// information. Settings, if any are given, are ignored.
func New(any) (register.LinterPlugin, error) { return plugin{}, nil }

type plugin struct{}

func (plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) { return analyzers.All, nil }
func (plugin) GetLoadMode() string                           { return register.LoadModeTypesInfo }
