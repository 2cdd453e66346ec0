GO ?= go
# The CLI is a module of its own (cmd/iamretry/go.mod), so that the library's
# go.mod carries none of its dependencies (the plot stack). Every target that
# checks the code runs in both modules: a go.work would make "go test ./..."
# at the root skip the CLI without a word.
CLI := cmd/iamretry

.PHONY: all test demo install bench lint fuzz

all: lint test

## test: every test of both modules, race detector on, nothing cached. The
## two modules run side by side (the CLI's tests wait on child processes
## much of the time); each one's output is printed whole when it ends, and
## the target fails when either fails.
test:
	@lib=$$(mktemp); cli=$$(mktemp); \
	( $(GO) test -race -count=1 ./... >$$lib 2>&1; echo $$? >$$lib.rc ) & \
	( $(GO) -C $(CLI) test -race -count=1 ./... >$$cli 2>&1; echo $$? >$$cli.rc ) & \
	wait; \
	echo "$(GO) test -race -count=1 ./..."; cat $$lib; \
	echo "$(GO) -C $(CLI) test -race -count=1 ./..."; cat $$cli; \
	rc=$$(( $$(cat $$lib.rc) | $$(cat $$cli.rc) )); rm -f $$lib $$lib.rc $$cli $$cli.rc; exit $$rc

## demo: the main job on the built-in fake server (no credentials, no network).
demo:
	$(GO) -C $(CLI) run . demo

## install: the iamretry command from this clone into $(go env GOBIN), or GOPATH/bin.
install:
	$(GO) -C $(CLI) install .

## bench: the performance contract (see BENCHMARKS.md).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./interceptor/...

## lint: go vet, gofmt and go.mod tidiness, in both modules.
lint:
	$(GO) vet ./...
	$(GO) -C $(CLI) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) -C $(CLI) mod tidy -diff

## fuzz: a short run of the backoff fuzz test.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDelay -fuzztime 30s ./interceptor/
