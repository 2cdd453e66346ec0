GO ?= go
# The CLI and the vet tool are modules of their own (cmd/iamretry/go.mod,
# cmd/iamretryvet/go.mod), so that the library's go.mod carries none of
# their dependencies (the plot stack, x/tools). Every target that checks the
# code runs in every module: a go.work would make "go test ./..." at the
# root skip them without a word.
CLI := cmd/iamretry
VET := cmd/iamretryvet

.PHONY: all test demo install bench lint fuzz

all: lint test

## test: every test of the three modules, race detector on, nothing cached.
## The modules run side by side (the CLI's tests wait on child processes
## much of the time); each one's output is printed whole when it ends, and
## the target fails when any fails.
test:
	@lib=$$(mktemp); cli=$$(mktemp); vet=$$(mktemp); \
	( $(GO) test -race -count=1 ./... >$$lib 2>&1; echo $$? >$$lib.rc ) & \
	( $(GO) -C $(CLI) test -race -count=1 ./... >$$cli 2>&1; echo $$? >$$cli.rc ) & \
	( $(GO) -C $(VET) test -race -count=1 ./... >$$vet 2>&1; echo $$? >$$vet.rc ) & \
	wait; \
	echo "$(GO) test -race -count=1 ./..."; cat $$lib; \
	echo "$(GO) -C $(CLI) test -race -count=1 ./..."; cat $$cli; \
	echo "$(GO) -C $(VET) test -race -count=1 ./..."; cat $$vet; \
	rc=$$(( $$(cat $$lib.rc) | $$(cat $$cli.rc) | $$(cat $$vet.rc) )); \
	rm -f $$lib $$lib.rc $$cli $$cli.rc $$vet $$vet.rc; exit $$rc

## demo: the main job on the built-in fake server (no credentials, no network).
demo:
	$(GO) -C $(CLI) run . demo

## install: the iamretry command from this clone into $(go env GOBIN), or GOPATH/bin.
install:
	$(GO) -C $(CLI) install .

## bench: the performance contract (see BENCHMARKS.md).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./interceptor/...

## lint: go vet, gofmt and go.mod tidiness, in every module; then
## iamretryvet over the repository's Examples and the README's Go snippets,
## which show right ways: any report there fails.
lint:
	$(GO) vet ./...
	$(GO) -C $(CLI) vet ./...
	$(GO) -C $(VET) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) -C $(CLI) mod tidy -diff
	$(GO) -C $(VET) mod tidy -diff
	$(GO) -C $(VET) test -count=1 -run '^TestRepositoryExamples$$' .
	@tool=$$(mktemp -d); trap 'rm -rf $$tool' EXIT; \
	echo "$(GO) -C $(VET) build -o $$tool/iamretryvet . && IAMRETRYVET=$$tool/iamretryvet $(GO) test -count=1 -run '^TestREADMESnippetsCompile$$' ./interceptor_test/"; \
	$(GO) -C $(VET) build -o $$tool/iamretryvet . && \
	IAMRETRYVET=$$tool/iamretryvet $(GO) test -count=1 -run '^TestREADMESnippetsCompile$$' ./interceptor_test/

## fuzz: a short run of the backoff fuzz test.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDelay -fuzztime 30s ./interceptor/
