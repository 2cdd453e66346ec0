package herd

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Table writes results to w as an aligned text table: a header line, then one
// line per result in the given order. The strategy column is left-aligned,
// the numbers right-aligned; durations are in seconds with one decimal.
// It returns an error if results is empty or writing fails.
func Table(w io.Writer, results []Result) error {
	if len(results) == 0 {
		return errors.New("herd: Table needs at least one result")
	}
	rows := [][]string{{"strategy", "calls", "peak/100ms", "retry peak", "succeeded", "gave up", "p50", "p99", "all done"}}
	for _, r := range results {
		rows = append(rows, []string{
			r.Strategy, itoa(r.Calls), itoa(r.Peak), itoa(r.RetryPeak),
			itoa(r.Succeeded), itoa(r.GaveUp), secs(r.P50), secs(r.P99), secs(r.AllDone),
		})
	}
	return writeAligned(w, rows)
}

// ContentionTable writes contention results to w as an aligned text table
// like [Table]'s: a header line, then one line per result in the given order.
// It returns an error if results is empty or writing fails.
func ContentionTable(w io.Writer, results []ContentionResult) error {
	if len(results) == 0 {
		return errors.New("herd: ContentionTable needs at least one result")
	}
	rows := [][]string{{"strategy", "writes", "landed", "conflicts", "gave up", "p50", "p99", "all landed"}}
	for _, r := range results {
		rows = append(rows, []string{
			r.Strategy, itoa(r.Writes), itoa(r.Landed), itoa(r.Conflicts),
			itoa(r.GaveUp), secs(r.P50), secs(r.P99), secs(r.AllLanded),
		})
	}
	return writeAligned(w, rows)
}

func itoa(n int) string { return strconv.Itoa(n) }

// secs formats d in seconds with one decimal, e.g. "31.2s".
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s" }

// writeAligned writes rows with columns two spaces apart, the first column
// left-aligned and the rest right-aligned, with no trailing spaces.
func writeAligned(w io.Writer, rows [][]string) error {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			switch {
			case i == 0 && len(row) == 1:
				b.WriteString(cell)
			case i == 0:
				b.WriteString(cell + pad)
			default:
				b.WriteString("  " + pad + cell)
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("herd: writing table: %w", err)
	}
	return nil
}
