package httpserver

import (
	"log/slog"
	"net/http"
	"time"
)

// recorder remembers what was answered, for the request log, and gives
// every write its own deadline (writeTimeout from now): a stream may live
// for hours, so no deadline can cover a whole response, but no single write
// may wait longer than that on a client that stopped reading. It forwards
// Flush and Unwrap: go-sdk flushes every SSE event through
// http.ResponseController, which needs to reach the real writer.
type recorder struct {
	http.ResponseWriter
	rc           *http.ResponseController // on the real writer
	writeTimeout time.Duration
	status       int
	bytes        int64
}

func (rec *recorder) extendWriteDeadline() {
	rec.rc.SetWriteDeadline(time.Now().Add(rec.writeTimeout))
}

func (rec *recorder) WriteHeader(code int) {
	if rec.status == 0 {
		rec.status = code
	}
	rec.extendWriteDeadline()
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	rec.extendWriteDeadline()
	n, err := rec.ResponseWriter.Write(p)
	rec.bytes += int64(n)
	return n, err
}

func (rec *recorder) Flush() {
	rec.extendWriteDeadline()
	rec.rc.Flush()
}

func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// logRequest writes one structured line per request. Deliberately absent:
// headers (Authorization carries the token) and the query string (an SSE
// session endpoint's ?sessionid= is as good as a credential for that
// session).
func (h *Handler) logRequest(rec *recorder, r *http.Request, start time.Time, id string) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK // handler wrote nothing: net/http answers 200
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	h.log.LogAttrs(r.Context(), level, "http request",
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Duration("duration", time.Since(start)),
		slog.String("remote", r.RemoteAddr),
		slog.Int64("bytes", rec.bytes),
		slog.String("request_id", id),
	)
}
