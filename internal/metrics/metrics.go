// Package metrics is mailgate's observability beside its logs: the
// Prometheus metrics served at /metrics by serve --http, and the request
// ids every tool call's log lines carry (requestid.go).
//
// Per-call metrics are counted on children resolved once, when the server
// is built, for every tool of the inventory: a call costs a map lookup, two
// counter increments and one histogram observation, with no label map
// built. What the store knows (outbox depth, send slots, pending
// approvals) is read when Prometheus scrapes, by collectors: nothing polls
// in between.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// OutboxStat is one mirror sink's backlog.
type OutboxStat struct {
	Sink  string
	Depth int
	// Lag is the age of the oldest message still waiting (0 when none is).
	Lag time.Duration
}

// Sources are what the scrape-time metrics read. A nil source is left out.
type Sources struct {
	// StoreRetries is how many times a store transaction ran again after
	// losing a race (SQLITE_BUSY, a PostgreSQL serialization failure).
	StoreRetries func() uint64
	Outbox       func(ctx context.Context) ([]OutboxStat, error)
	// SendSlots is the send limit's slots taken in the rolling window and
	// the limit (SEND_LIMIT_PER_HOUR).
	SendSlots func(ctx context.Context) (used, limit int, err error)
	// PendingApprovals counts the requests waiting in Pending_Approval/.
	PendingApprovals func() (int, error)
	Logger           *slog.Logger
}

// ScrapeTimeout bounds the store queries of one scrape.
const ScrapeTimeout = 5 * time.Second

// Metrics is one server's registry.
type Metrics struct {
	reg   *prometheus.Registry
	tools map[string]toolChildren
	other toolChildren // a name not in the inventory: one series, whatever the name
}

type toolChildren struct {
	calls, errors prometheus.Counter
	latency       prometheus.Observer
}

// latencyBuckets span an agent-mail call on an idle store (sub-millisecond)
// to an email call waiting on Gmail (seconds).
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// OtherTool is the tool label of calls naming a tool the server does not
// have.
const OtherTool = "_other"

// New builds the registry with a series per tool of tools.
func New(tools []string, src Sources) *Metrics {
	if src.Logger == nil {
		src.Logger = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mailgate_tool_calls_total", Help: "Tool calls answered, by tool.",
	}, []string{"tool"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mailgate_tool_errors_total", Help: "Tool calls answered with an error (a tool error, isError, or a protocol error), by tool.",
	}, []string{"tool"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "mailgate_tool_call_duration_seconds", Help: "Time to answer a tool call, by tool.", Buckets: latencyBuckets,
	}, []string{"tool"})
	reg.MustRegister(calls, errs, latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&storeCollector{src: src})
	m := &Metrics{reg: reg, tools: map[string]toolChildren{}}
	child := func(name string) toolChildren {
		return toolChildren{calls: calls.WithLabelValues(name), errors: errs.WithLabelValues(name), latency: latency.WithLabelValues(name)}
	}
	for _, t := range slices.Compact(slices.Sorted(slices.Values(tools))) {
		m.tools[t] = child(t)
	}
	m.other = child(OtherTool)
	return m
}

// ToolCall counts one answered call. It is safe for concurrent use; the
// map is only read after New.
func (m *Metrics) ToolCall(_ context.Context, tool string, failed bool, d time.Duration) {
	c, ok := m.tools[tool]
	if !ok {
		c = m.other
	}
	c.calls.Inc()
	if failed {
		c.errors.Inc()
	}
	c.latency.Observe(d.Seconds())
}

// Handler serves the registry in Prometheus' text format (or OpenMetrics
// when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
		Timeout:           2 * ScrapeTimeout,
	})
}

// Registry is the registry, for tests and for adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// storeCollector reads the Sources at scrape time.
type storeCollector struct{ src Sources }

var (
	retriesDesc = prometheus.NewDesc("mailgate_store_tx_retries_total",
		"Store transactions run again after losing a race with another writer (SQLITE_BUSY, PostgreSQL serialization failure or deadlock), in this process.", nil, nil)
	outboxDepthDesc = prometheus.NewDesc("mailgate_mirror_outbox_depth",
		"Messages waiting in the mirror outbox, by sink (whole store, every process).", []string{"sink"}, nil)
	outboxLagDesc = prometheus.NewDesc("mailgate_mirror_outbox_lag_seconds",
		"Age of the oldest message waiting in the mirror outbox, by sink (0 when none waits).", []string{"sink"}, nil)
	slotsUsedDesc = prometheus.NewDesc("mailgate_send_limit_slots_used",
		"Send-limit slots taken in the rolling hour (every process on the store).", nil, nil)
	slotsLimitDesc = prometheus.NewDesc("mailgate_send_limit_slots",
		"The send limit: slots per rolling hour (SEND_LIMIT_PER_HOUR).", nil, nil)
	pendingDesc = prometheus.NewDesc("mailgate_approvals_pending",
		"Approval requests waiting in the vault's Pending_Approval/ folder.", nil, nil)
)

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{retriesDesc, outboxDepthDesc, outboxLagDesc, slotsUsedDesc, slotsLimitDesc, pendingDesc} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	failed := func(what string, err error) {
		c.src.Logger.Warn("metrics: reading "+what+" failed; left out of this scrape", "err", err)
	}
	if f := c.src.StoreRetries; f != nil {
		ch <- prometheus.MustNewConstMetric(retriesDesc, prometheus.CounterValue, float64(f()))
	}
	if f := c.src.Outbox; f != nil {
		if stats, err := f(ctx); err != nil {
			failed("the mirror outbox", err)
		} else {
			for _, s := range stats {
				ch <- prometheus.MustNewConstMetric(outboxDepthDesc, prometheus.GaugeValue, float64(s.Depth), s.Sink)
				ch <- prometheus.MustNewConstMetric(outboxLagDesc, prometheus.GaugeValue, s.Lag.Seconds(), s.Sink)
			}
		}
	}
	if f := c.src.SendSlots; f != nil {
		if used, limit, err := f(ctx); err != nil {
			failed("the send limit", err)
		} else {
			ch <- prometheus.MustNewConstMetric(slotsUsedDesc, prometheus.GaugeValue, float64(used))
			ch <- prometheus.MustNewConstMetric(slotsLimitDesc, prometheus.GaugeValue, float64(limit))
		}
	}
	if f := c.src.PendingApprovals; f != nil {
		if n, err := f(); err != nil {
			failed("Pending_Approval/", err)
		} else {
			ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(n))
		}
	}
}
