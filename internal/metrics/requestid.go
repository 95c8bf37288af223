package metrics

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"sync/atomic"

	"github.com/mailgate/mailgate/internal/ctxkey"
)

// RequestIDHeader carries the HTTP server's id of a request to the MCP
// layer (go-sdk hands a Streamable HTTP request's headers to the call), so
// the request's log line and its tool call's share one id. The server sets
// it; a client's own value is replaced.
const RequestIDHeader = "X-Request-Id"

// Request ids are this process's random prefix and a sequence number:
// unique across the processes sharing a store, and one atomic add to make.
var (
	idPrefix = func() string {
		b := make([]byte, 4)
		_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
		return hex.EncodeToString(b) + "-"
	}()
	idSeq atomic.Uint64
)

// NewRequestID returns a new id, such as "9f3a01c2-17".
func NewRequestID() string {
	return idPrefix + strconv.FormatUint(idSeq.Add(1), 10)
}

var requestIDKey = ctxkey.New[string]("metrics.request_id")

// WithRequestID returns ctx carrying id, which LogHandler adds to every
// line logged with that context.
func WithRequestID(ctx context.Context, id string) context.Context {
	return requestIDKey.With(ctx, id)
}

// RequestID is ctx's request id, "" when it has none.
func RequestID(ctx context.Context) string {
	return requestIDKey.Value(ctx)
}

// LogHandler wraps h so that a line logged with a context carrying a
// request id (slog's …Context calls) has a request_id attribute.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(requestIDHandler); ok {
		return h
	}
	return requestIDHandler{h}
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
