GO ?= go

.PHONY: all test demo bench lint fuzz

all: lint test

## test: every test, race detector on, nothing cached.
test:
	$(GO) test -race -count=1 ./...

## demo: the main job on the built-in fake server (no credentials, no network).
demo:
	$(GO) run ./cmd/iamretry demo

## bench: the performance contract (see BENCHMARKS.md).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./interceptor/...

## lint: go vet, gofmt and go.mod tidiness.
lint:
	$(GO) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff

## fuzz: a short run of the backoff fuzz test.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDelay -fuzztime 30s ./interceptor/
