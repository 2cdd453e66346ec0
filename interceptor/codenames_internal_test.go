package interceptor

import (
	"testing"

	grpccodes "google.golang.org/grpc/codes"
)

// TestCodeNamesFromGenproto: the grpc.status values, taken from genproto's
// google.rpc.Code, name every code as grpc's own table parses it.
func TestCodeNamesFromGenproto(t *testing.T) {
	for c, n := range codeNames {
		var parsed grpccodes.Code
		if err := parsed.UnmarshalJSON([]byte(`"` + n + `"`)); err != nil || int(parsed) != c {
			t.Errorf("codeNames[%d] = %q, which grpc parses as %v, %v", c, n, parsed, err)
		}
	}
}
