package updaters

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/googleapis/gax-go/v2/callctx"
	"google.golang.org/grpc/metadata"

	"github.com/iamretry/iamretry/interceptor/internal/ctxforms"
)

type formsKey = ctxforms.Forms

// KeyOf is the Key of a caller's context: its context forms
// (DisableContext, RetryNotFoundContext, DeadlineContext,
// MaxAttemptsContext) and its outgoing headers, gRPC's outgoing metadata
// and gax's callctx headers (a batch's calls carry its leader's, so only
// callers whose headers are the same may share them). Deadlines are not
// part of it: a batch carries the latest of its members'.
func KeyOf(ctx context.Context) Key {
	var b strings.Builder
	if md, ok := metadata.FromOutgoingContext(ctx); ok && len(md) > 0 {
		b.WriteString("grpc")
		writeHeaders(&b, md)
	}
	if h := callctx.HeadersFromContext(ctx); len(h) > 0 {
		b.WriteString("gax")
		writeHeaders(&b, h)
	}
	return Key{forms: ctxforms.Of(ctx), headers: b.String()}
}

// writeHeaders writes h in a form that two maps with the same keys and
// values, in the same order per key, write alike.
func writeHeaders(b *strings.Builder, h map[string][]string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(strconv.Quote(k))
		b.WriteByte('[')
		for _, v := range h[k] {
			b.WriteString(strconv.Quote(v))
			b.WriteByte(',')
		}
		b.WriteByte(']')
	}
	b.WriteByte(';')
}

// retriesNotFound reports whether ctx carries RetryNotFoundContext.
func retriesNotFound(ctx context.Context) bool {
	return ctxforms.Of(ctx).Flags&ctxforms.NotFound != 0
}
