package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// stats are one client's (or, merged, the run's) latencies and errors. A
// client owns its stats alone, so no locking.
type stats struct {
	lat    map[string][]time.Duration // by tool
	errors map[errKey]*errGroup
}

type errKey struct{ tool, kind string }

type errGroup struct {
	count int
	first []string // the first few messages, for the report
}

// firstErrors is how many messages each error group keeps.
const firstErrors = 3

func newStats() *stats {
	return &stats{lat: map[string][]time.Duration{}, errors: map[errKey]*errGroup{}}
}

func (s *stats) record(tool string, d time.Duration) { s.lat[tool] = append(s.lat[tool], d) }

func (s *stats) fail(tool string, err error) {
	kind := "other"
	var ce *callError
	if errors.As(err, &ce) {
		kind = ce.kind
	}
	g := s.errors[errKey{tool, kind}]
	if g == nil {
		g = &errGroup{}
		s.errors[errKey{tool, kind}] = g
	}
	g.count++
	if len(g.first) < firstErrors {
		g.first = append(g.first, err.Error())
	}
}

func (s *stats) merge(o *stats) {
	for tool, l := range o.lat {
		s.lat[tool] = append(s.lat[tool], l...)
	}
	for k, g := range o.errors {
		mine := s.errors[k]
		if mine == nil {
			mine = &errGroup{}
			s.errors[k] = mine
		}
		mine.count += g.count
		for _, m := range g.first {
			if len(mine.first) < firstErrors {
				mine.first = append(mine.first, m)
			}
		}
	}
}

func (s *stats) errorCount() int {
	n := 0
	for _, g := range s.errors {
		n += g.count
	}
	return n
}

// result is everything the report prints.
type result struct {
	cfg            config
	endpoint       string
	spawned        bool
	pid            int
	procName       string
	stats          *stats
	elapsed        time.Duration
	interrupted    bool
	loadBefore     string
	loadAfter      string
	loaderCPU      time.Duration
	machineCPU     time.Duration // busy time of all CPUs, every process
	before, after  procStat
	endOfLoad      procStat
	series         []sample
	shutdown       string
	shutdownClean  bool
	serverProblems string
}

// ok is the exit status: every call answered correctly, the run was not
// cut short, and a spawned server stopped cleanly.
func (r *result) ok() bool {
	return r.stats.errorCount() == 0 && r.total() > 0 && !r.interrupted && (!r.spawned || r.shutdownClean)
}

func (r *result) total() int {
	n := 0
	for _, l := range r.stats.lat {
		n += len(l)
	}
	return n
}

// percentile is the nearest-rank percentile of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func (r *result) print(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	secs := r.elapsed.Seconds()
	var mix []string
	for _, e := range r.cfg.mix {
		mix = append(mix, fmt.Sprintf("%s=%d", e.op, e.weight))
	}
	pacing := "closed loop (each client calls back to back)"
	if r.cfg.rate > 0 {
		pacing = fmt.Sprintf("paced at %.0f calls/s in total (latency from each call's due time)", r.cfg.rate)
	}
	p("mailgate-load: %d clients for %s, mix %s, %s\n", r.cfg.clients, r.cfg.duration, strings.Join(mix, ","), pacing)
	server := "running server"
	if r.spawned {
		server = "spawned " + r.cfg.spawn + " (MAILGATE_TOOLS=agentmail, bearer token, fresh store)"
	}
	p("server:   %s, %s", r.endpoint, server)
	if r.pid != 0 {
		p(", pid %d (%s)", r.pid, r.procName)
	}
	p("\nloadavg:  before %s, after %s\n", orDash(r.loadBefore), orDash(r.loadAfter))
	if r.interrupted {
		p("INTERRUPTED after %.1fs: the figures cover the part that ran\n", secs)
	}

	total := r.total()
	p("\ncalls:    %d in %.1fs = %.0f calls/s (each a tool call over HTTP; a reserve is two: reserve + release)\n",
		total, secs, float64(total)/secs)
	p("\n%-27s %8s %8s %9s %9s %9s %9s\n", "tool", "calls", "calls/s", "p50", "p90", "p99", "max")
	var all []time.Duration
	for _, tool := range tools {
		l := slices.Clone(r.stats.lat[tool])
		all = append(all, l...)
		printLatency(w, tool, l, secs)
	}
	printLatency(w, "all", all, secs)

	p("\nerrors:   %d\n", r.stats.errorCount())
	keys := make([]errKey, 0, len(r.stats.errors))
	for k := range r.stats.errors {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b errKey) int { return strings.Compare(a.tool+a.kind, b.tool+b.kind) })
	for _, k := range keys {
		g := r.stats.errors[k]
		p("  %-27s %-20s %d\n", k.tool, k.kind, g.count)
		for _, m := range g.first {
			p("      %.300s\n", m)
		}
	}

	if r.pid != 0 {
		r.printServer(w)
	}
	if r.spawned {
		p("server shutdown: %s\n", r.shutdown)
		if r.serverProblems != "" {
			p("server warnings and errors:%s\n", indent(r.serverProblems))
		}
	}
	verdict := "PASS: every call succeeded"
	if !r.ok() {
		verdict = "FAIL"
	}
	p("\n%s\n", verdict)
}

func printLatency(w io.Writer, name string, l []time.Duration, secs float64) {
	if len(l) == 0 {
		fmt.Fprintf(w, "%-27s %8d\n", name, 0)
		return
	}
	slices.Sort(l)
	fmt.Fprintf(w, "%-27s %8d %8.0f %9s %9s %9s %9s\n", name, len(l), float64(len(l))/secs,
		ms(percentile(l, 50)), ms(percentile(l, 90)), ms(percentile(l, 99)), ms(l[len(l)-1]))
}

// printServer prints the server's memory and descriptors: before the
// clients connected, about every tenth of the run, at the end of the load
// with the sessions still open, the peak, and after the sessions closed.
func (r *result) printServer(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("\nserver process (pid %d)             %11s %6s %8s\n", r.pid, "RSS", "fds", "threads")
	row := func(label string, s procStat) {
		p("  %-33s %11s %6d %8d\n", label, mib(s.RSS), s.FDs, s.Threads)
	}
	row("before (idle, no sessions)", r.before)
	var peak procStat
	step := max(1, len(r.series)/10)
	for i, s := range r.series {
		if i%step == 0 || i == len(r.series)-1 {
			row(fmt.Sprintf("load t=%.0fs", s.At.Seconds()), s.procStat)
		}
		peak.RSS, peak.FDs, peak.Threads = max(peak.RSS, s.RSS), max(peak.FDs, s.FDs), max(peak.Threads, s.Threads)
	}
	row("end of load (sessions open)", r.endOfLoad)
	peak.RSS, peak.FDs, peak.Threads = max(peak.RSS, r.endOfLoad.RSS), max(peak.FDs, r.endOfLoad.FDs), max(peak.Threads, r.endOfLoad.Threads)
	row("peak during load", peak)
	row("after (sessions closed)", r.after)
	// Drift across the steady state: from the first sample a tenth into
	// the run (start-up allocation done) to the end. Growth here, rather
	// than a higher level than before, is what a leak looks like.
	if len(r.series) > 1 {
		from := r.series[min(len(r.series)-1, len(r.series)/10)]
		to := r.endOfLoad
		p("  drift t=%.0fs → end of load: RSS %+.1f MiB, fds %+d, threads %+d\n",
			from.At.Seconds(), float64(to.RSS-from.RSS)/(1<<20), to.FDs-from.FDs, to.Threads-from.Threads)
	}
	if len(r.series) > 0 && r.elapsed > 0 {
		secs := r.elapsed.Seconds()
		srv := r.endOfLoad.CPU - r.series[0].CPU
		p("  CPU during load, in cores: server %.2f, load generator %.2f", srv.Seconds()/secs, r.loaderCPU.Seconds()/secs)
		if r.machineCPU > 0 {
			rest := r.machineCPU - srv - r.loaderCPU
			p(", everything else %.2f, of %d", max(0, rest.Seconds()/secs), runtime.NumCPU())
		}
		p("\n")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
