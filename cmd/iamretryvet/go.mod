module github.com/iamretry/iamretry/cmd/iamretryvet

go 1.26.0

require (
	github.com/golangci/plugin-module-register v0.1.2
	golang.org/x/tools v0.53.0
)

require (
	golang.org/x/mod v0.43.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
)
