GO ?= go
# The CLI and the vet tool are modules of their own (cmd/iamretry/go.mod,
# cmd/iamretryvet/go.mod), so that the library's go.mod carries none of
# their dependencies (the plot stack, x/tools). Every target that checks the
# code runs in every module: a go.work would make "go test ./..." at the
# root skip them without a word.
CLI := cmd/iamretry
VET := cmd/iamretryvet

.PHONY: all test flakes demo install bench lint fuzz

all: lint test

## test: every test of the three modules, nothing cached, race detector on
## for the library and the CLI. The vet tool's tests run without it here:
## its analyzers keep no shared state and start no goroutine, and x/tools'
## type checker under -race tripled make test's time (make flakes runs them
## under -race); the packages they load are built with -race (GOFLAGS), the
## graph the library's tests have built. That graph is built once first
## ("go build -race", a second or two when cached): built by the modules side
## by side, each would compile it again. Then the modules run side by side
## (the CLI's tests wait on child processes much of the time); each one's
## output is printed whole when it ends, and the target fails when any fails.
test:
	$(GO) build -race ./...
	@lib=$$(mktemp); cli=$$(mktemp); vet=$$(mktemp); \
	( $(GO) test -race -count=1 ./... >$$lib 2>&1; echo $$? >$$lib.rc ) & \
	( $(GO) -C $(CLI) test -race -count=1 ./... >$$cli 2>&1; echo $$? >$$cli.rc ) & \
	( GOFLAGS="$$GOFLAGS -race" $(GO) -C $(VET) test -race=false -count=1 ./... >$$vet 2>&1; echo $$? >$$vet.rc ) & \
	wait; \
	echo "$(GO) test -race -count=1 ./..."; cat $$lib; \
	echo "$(GO) -C $(CLI) test -race -count=1 ./..."; cat $$cli; \
	echo "GOFLAGS=-race $(GO) -C $(VET) test -race=false -count=1 ./..."; cat $$vet; \
	rc=$$(( $$(cat $$lib.rc) | $$(cat $$cli.rc) | $$(cat $$vet.rc) )); \
	rm -f $$lib $$lib.rc $$cli $$cli.rc $$vet $$vet.rc; exit $$rc

## flakes: the flake hunt (slow: the better part of an hour on 2 cores).
## Every test of the library 50 times (FLAKES_COUNT), the CLI's 10 times
## (FLAKES_CLI_COUNT) and the vet tool's twice (FLAKES_VET_COUNT), race
## detector on, first as the machine is, then
## beside two CPU-bound busy loops that the target starts and always stops
## (also when a run fails or make is interrupted; a loop whose recipe is
## gone ends on its own). A test that fails once in fifty runs is broken:
## fix it at its cause, never with a longer timeout or a retry. Prints one
## line per run and the tests that failed, keeps the logs (their directory
## is printed), and fails when any test failed even once.
FLAKES_COUNT ?= 50
FLAKES_CLI_COUNT ?= 10
FLAKES_VET_COUNT ?= 2
FLAKES_TIMEOUT ?= 2h
flakes:
	@logs=$$(mktemp -d "$${TMPDIR:-/tmp}/iamretry-flakes.XXXXXX"); loops=""; bad=0; \
	stop() { for p in $$loops; do kill $$p 2>/dev/null; done; loops=""; }; \
	trap 'stop' EXIT; trap 'stop; exit 130' INT; trap 'stop; exit 141' PIPE; trap 'stop; exit 143' TERM HUP; \
	run() { \
		name=$$1; shift; log=$$logs/$$name.log; start=$$(date +%s); \
		"$$@" >$$log 2>&1; rc=$$?; secs=$$(( $$(date +%s) - start )); \
		fails=$$(grep -c '^--- FAIL' $$log); \
		if [ $$rc -eq 0 ]; then res=ok; else res=FAIL; bad=1; fi; \
		printf 'flakes: %-4s %-11s %5ds  %2d packages ok, %d FAIL, %d failed tests: %s\n' \
			$$res $$name $$secs $$(grep -c '^ok' $$log) $$(grep -c '^FAIL	' $$log) $$fails "$$*"; \
		grep -E '^(FAIL	|panic: test timed out)' $$log | sed 's/^/flakes:     /'; \
		grep '^--- FAIL' $$log | sed 's/ (.*//' | sort | uniq -c | sed 's/^/flakes:     /'; \
	}; \
	suite() { \
		run $$1-lib $(GO) test -race -count=$(FLAKES_COUNT) -timeout=$(FLAKES_TIMEOUT) ./...; \
		run $$1-cli $(GO) -C $(CLI) test -race -count=$(FLAKES_CLI_COUNT) -timeout=$(FLAKES_TIMEOUT) ./...; \
		run $$1-vet $(GO) -C $(VET) test -race -count=$(FLAKES_VET_COUNT) -timeout=$(FLAKES_TIMEOUT) ./...; \
	}; \
	echo "flakes: logs in $$logs (kept when a run fails); quiet first, then beside two busy loops"; \
	suite quiet; \
	busy() { i=0; while :; do i=$$((i + 1)); [ $$i -lt 100000 ] || { i=0; kill -0 $$me 2>/dev/null || exit; }; done; }; \
	me=$$$$; busy & loops="$$loops $$!"; busy & loops="$$loops $$!"; \
	suite loaded; \
	stop; \
	if [ $$bad -eq 0 ]; then echo "flakes: PASS: no test failed, quiet or loaded"; rm -rf $$logs; \
	else echo "flakes: FAIL: see the lines above and the logs in $$logs"; exit 1; fi

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
