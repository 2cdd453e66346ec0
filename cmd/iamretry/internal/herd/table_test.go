package herd

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTable(t *testing.T) {
	results := []Result{
		{Strategy: "documented", Calls: 1234, Peak: 1000, RetryPeak: 110, Succeeded: 1000, P50: 31500 * time.Millisecond, P99: 45 * time.Second, AllDone: 46 * time.Second},
		{Strategy: "no jitter", Calls: 9, Peak: 5, RetryPeak: 5, Succeeded: 2, GaveUp: 1, P50: time.Second, P99: 2 * time.Second, AllDone: 300 * time.Second},
	}
	var b strings.Builder
	if err := Table(&b, results); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"strategy    calls  peak/100ms  retry peak  succeeded  gave up    p50    p99  all done\n" +
		"documented   1234        1000         110       1000        0  31.5s  45.0s     46.0s\n" +
		"no jitter       9           5           5          2        1   1.0s   2.0s    300.0s\n"
	if got := b.String(); got != want {
		t.Errorf("Table:\n%s\nwant:\n%s", got, want)
	}

	// Real results: a header and one aligned row per strategy, in order.
	var real []Result
	for _, s := range strategies {
		real = append(real, mustSimulate(t, talk, s))
	}
	b.Reset()
	if err := Table(&b, real); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 1+len(strategies) || !strings.HasPrefix(lines[0], "strategy ") {
		t.Fatalf("Table:\n%s", b.String())
	}
	for i, s := range strategies {
		if !strings.HasPrefix(lines[i+1], s.Name+" ") || len(lines[i+1]) != len(lines[0]) {
			t.Errorf("row %d = %q; want it to start with %q and be as wide as the header", i+1, lines[i+1], s.Name)
		}
	}
}

func TestContentionTable(t *testing.T) {
	var b strings.Builder
	err := ContentionTable(&b, []ContentionResult{{Strategy: "full jitter", Writes: 300, Landed: 100, Conflicts: 200, P50: 2 * time.Second, P99: 9 * time.Second, AllLanded: 9500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"strategy     writes  landed  conflicts  gave up   p50   p99  all landed\n" +
		"full jitter     300     100        200        0  2.0s  9.0s        9.5s\n"
	if got := b.String(); got != want {
		t.Errorf("ContentionTable:\n%s\nwant:\n%s", got, want)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTableErrors(t *testing.T) {
	if err := Table(&strings.Builder{}, nil); err == nil {
		t.Error("Table(nil) succeeded")
	}
	if err := ContentionTable(&strings.Builder{}, nil); err == nil {
		t.Error("ContentionTable(nil) succeeded")
	}
	if err := Table(failWriter{}, []Result{{Strategy: "x"}}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Table to a failing writer = %v, want the write error", err)
	}
}
