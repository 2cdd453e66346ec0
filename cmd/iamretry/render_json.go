package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

// jsonRenderer writes each event as one JSON object on a line of its own,
// its "type" first: for programs, and for the tests that check the demo's
// claims.
type jsonRenderer struct{ w io.Writer }

func (r jsonRenderer) render(ev event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	var line bytes.Buffer
	line.WriteString(`{"type":` + strconv.Quote(ev.kind()))
	if body := bytes.TrimPrefix(b, []byte("{")); len(body) > 1 { // more than "}"
		line.WriteByte(',')
		line.Write(body)
	} else {
		line.WriteByte('}')
	}
	line.WriteByte('\n')
	_, err = r.w.Write(line.Bytes())
	return err
}
