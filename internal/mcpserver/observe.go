package mcpserver

import (
	"context"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/metrics"
)

// CallObserver is told of every answered tool call: its tool, whether it
// failed (a tool error or a protocol error) and how long it took. ctx
// carries the call's request id. It must be cheap: it runs on every call.
type CallObserver interface {
	ToolCall(ctx context.Context, tool string, failed bool, d time.Duration)
}

// requestID is the id of the HTTP request that carried req (set by the
// HTTP server, metrics.RequestIDHeader), or a new one (stdio, SSE).
func requestID(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		if id := ex.Header.Get(metrics.RequestIDHeader); id != "" {
			return id
		}
	}
	return metrics.NewRequestID()
}

// ToolNames are the names of the inventory's tools of sets, for metrics
// resolved before the first call.
func ToolNames(sets []string) []string {
	var names []string
	for _, e := range inventory {
		if slices.Contains(sets, e.Set) {
			names = append(names, e.Name)
		}
	}
	return names
}
