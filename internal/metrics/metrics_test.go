package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func TestToolCallCounts(t *testing.T) {
	logs := &testutil.Buffer{}
	m := New([]string{"send_message", "fetch_inbox", "send_message"}, Sources{
		StoreRetries: func() uint64 { return 7 },
		Outbox: func(context.Context) ([]OutboxStat, error) {
			return []OutboxStat{{Sink: "gmail", Depth: 3, Lag: 90 * time.Second}}, nil
		},
		SendSlots:        func(context.Context) (int, int, error) { return 0, 0, errors.New("store gone") },
		PendingApprovals: func() (int, error) { return 2, nil },
		Logger:           slog.New(slog.NewTextHandler(logs, nil)),
	})
	ctx := context.Background()
	for range 5 {
		m.ToolCall(ctx, "fetch_inbox", false, time.Millisecond)
	}
	m.ToolCall(ctx, "send_message", true, 2*time.Second)
	m.ToolCall(ctx, "made_up_by_a_client", true, time.Millisecond)
	body := scrape(t, m)
	for _, want := range []string{
		`mailgate_tool_calls_total{tool="fetch_inbox"} 5`,
		`mailgate_tool_errors_total{tool="fetch_inbox"} 0`,
		`mailgate_tool_calls_total{tool="send_message"} 1`,
		`mailgate_tool_errors_total{tool="send_message"} 1`,
		`mailgate_tool_calls_total{tool="_other"} 1`,
		`mailgate_tool_call_duration_seconds_bucket{tool="fetch_inbox",le="0.001"} 5`,
		`mailgate_tool_call_duration_seconds_bucket{tool="send_message",le="1"} 0`,
		`mailgate_tool_call_duration_seconds_bucket{tool="send_message",le="2.5"} 1`,
		`mailgate_store_tx_retries_total 7`,
		`mailgate_mirror_outbox_depth{sink="gmail"} 3`,
		`mailgate_mirror_outbox_lag_seconds{sink="gmail"} 90`,
		`mailgate_approvals_pending 2`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(body, "made_up_by_a_client") || strings.Contains(body, "mailgate_send_limit_slots") {
		t.Errorf("a client's tool name or a failed source in the scrape:\n%s", body)
	}
	if !strings.Contains(logs.String(), "metrics: reading the send limit failed") {
		t.Errorf("the failed source was not logged: %s", logs)
	}
}

// A call costs no allocation: the children are resolved once.
func TestToolCallAllocates(t *testing.T) {
	m := New([]string{"fetch_inbox"}, Sources{})
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { m.ToolCall(ctx, "fetch_inbox", false, time.Millisecond) }); n != 0 {
		t.Errorf("ToolCall allocates %v times per call", n)
	}
}

func TestRequestIDInLogs(t *testing.T) {
	var buf testutil.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&buf, nil))).With("k", "v")
	id := NewRequestID()
	log.InfoContext(WithRequestID(context.Background(), id), "in a call")
	log.Info("outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "request_id="+id) || strings.Contains(lines[1], "request_id") {
		t.Fatalf("log:\n%s", buf.String())
	}
	if NewRequestID() == id {
		t.Fatal("two requests share an id")
	}
}

func BenchmarkToolCall(b *testing.B) {
	m := New([]string{"fetch_inbox", "send_message"}, Sources{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		m.ToolCall(ctx, "fetch_inbox", false, time.Millisecond)
	}
}
