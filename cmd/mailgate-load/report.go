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
	cfg         config
	spawned     bool
	servers     []*serverRun // one for -url (pid 0 when not sampled)
	stats       *stats
	elapsed     time.Duration
	interrupted bool
	loadBefore  string
	loadAfter   string
	loaderCPU   time.Duration
	machineCPU  time.Duration // busy time of all CPUs, every process
}

// serverRun is one server's part of the run: its samples, the calls its
// clients made, and, when spawned, how it stopped.
type serverRun struct {
	endpoint      string
	pid           int
	procName      string
	smp           *sampler
	before, after procStat
	endOfLoad     procStat
	series        []sample
	calls, errors int // answered during the run: successes and failures
	shutdown      string
	clean         bool
	problems      string
}

// ok is the exit status: every call answered correctly, the run was not
// cut short, and every spawned server stopped cleanly.
func (r *result) ok() bool {
	if r.stats.errorCount() != 0 || r.total() == 0 || r.interrupted {
		return false
	}
	for _, sr := range r.servers {
		if r.spawned && !sr.clean {
			return false
		}
	}
	return true
}

// problems is the spawned servers' warnings and errors, each server's under
// its name when there are several.
func (r *result) problems() string {
	var out []string
	for i, sr := range r.servers {
		switch {
		case sr.problems == "":
		case len(r.servers) == 1:
			out = append(out, sr.problems)
		default:
			out = append(out, fmt.Sprintf("server #%d (pid %d):%s", i+1, sr.pid, indent(sr.problems)))
		}
	}
	return strings.Join(out, "\n")
}

// store says where the load's data went, without the database password.
func (r *result) store() string {
	n := len(r.servers)
	servers := "1 server"
	if n != 1 {
		servers = fmt.Sprintf("%d servers sharing it", n)
	}
	switch {
	case !r.spawned:
		return fmt.Sprintf("the running server's own, 1 server; project %s", r.cfg.project)
	case r.cfg.db == "":
		return fmt.Sprintf("sqlite (throwaway home), %s; project %s", servers, r.cfg.project)
	default:
		return fmt.Sprintf("postgres %s, %s; project %s (new for this run)", r.cfg.dbName, servers, r.cfg.project)
	}
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
		server = "spawned " + r.cfg.spawn + " (MAILGATE_TOOLS=agentmail, bearer token)"
	}
	if len(r.servers) == 1 {
		sr := r.servers[0]
		p("server:   %s, %s", sr.endpoint, server)
		if sr.pid != 0 {
			p(", pid %d (%s)", sr.pid, sr.procName)
		}
		p("\n")
	} else {
		p("servers:  %d %s, client i → server i mod %d\n", len(r.servers), server, len(r.servers))
		for i, sr := range r.servers {
			p("  #%-2d %s, pid %d (%s)\n", i+1, sr.endpoint, sr.pid, sr.procName)
		}
	}
	p("store:    %s\n", r.store())
	p("loadavg:  before %s, after %s\n", orDash(r.loadBefore), orDash(r.loadAfter))
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

	switch {
	case len(r.servers) == 1 && r.servers[0].pid != 0:
		r.printServer(w, r.servers[0])
	case len(r.servers) > 1:
		r.printServers(w)
	}
	if r.spawned {
		if len(r.servers) == 1 {
			p("server shutdown: %s\n", r.servers[0].shutdown)
		} else {
			p("\nserver shutdown:\n")
			for i, sr := range r.servers {
				p("  #%-2d %s\n", i+1, sr.shutdown)
			}
		}
		if pr := r.problems(); pr != "" {
			p("server warnings and errors:%s\n", indent(pr))
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
func (r *result) printServer(w io.Writer, sr *serverRun) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("\nserver process (pid %d)             %11s %6s %8s\n", sr.pid, "RSS", "fds", "threads")
	row := func(label string, s procStat) {
		p("  %-33s %11s %6d %8d\n", label, mib(s.RSS), s.FDs, s.Threads)
	}
	row("before (idle, no sessions)", sr.before)
	var peak procStat
	step := max(1, len(sr.series)/10)
	for i, s := range sr.series {
		if i%step == 0 || i == len(sr.series)-1 {
			row(fmt.Sprintf("load t=%.0fs", s.At.Seconds()), s.procStat)
		}
		peak.RSS, peak.FDs, peak.Threads = max(peak.RSS, s.RSS), max(peak.FDs, s.FDs), max(peak.Threads, s.Threads)
	}
	row("end of load (sessions open)", sr.endOfLoad)
	peak.RSS, peak.FDs, peak.Threads = max(peak.RSS, sr.endOfLoad.RSS), max(peak.FDs, sr.endOfLoad.FDs), max(peak.Threads, sr.endOfLoad.Threads)
	row("peak during load", peak)
	row("after (sessions closed)", sr.after)
	// Descriptors above the idle count after the sessions closed are a leak
	// only if they are connections: the store's pool keeps the SQLite files
	// of the connections the load made it open (settle).
	if sr.after.FDs > sr.before.FDs {
		if sr.after.Sockets <= sr.before.Sockets {
			p("  after: sockets back to idle (%d): the %d descriptors over the idle count are not connections (the store's pool keeps its SQLite files open)\n",
				sr.after.Sockets, sr.after.FDs-sr.before.FDs)
		} else {
			p("  after: %d sockets against %d idle: connections still open\n", sr.after.Sockets, sr.before.Sockets)
		}
	}
	// Drift across the steady state: from the first sample a tenth into
	// the run (start-up allocation done) to the end. Growth here, rather
	// than a higher level than before, is what a leak looks like.
	if len(sr.series) > 1 {
		from := sr.series[min(len(sr.series)-1, len(sr.series)/10)]
		to := sr.endOfLoad
		p("  drift t=%.0fs → end of load: RSS %+.1f MiB, fds %+d, threads %+d\n",
			from.At.Seconds(), float64(to.RSS-from.RSS)/(1<<20), to.FDs-from.FDs, to.Threads-from.Threads)
	}
	if len(sr.series) > 0 && r.elapsed > 0 {
		secs := r.elapsed.Seconds()
		srv := sr.endOfLoad.CPU - sr.series[0].CPU
		p("  CPU during load, in cores: server %.2f, load generator %.2f", srv.Seconds()/secs, r.loaderCPU.Seconds()/secs)
		if r.machineCPU > 0 {
			rest := r.machineCPU - srv - r.loaderCPU
			p(", everything else %.2f, of %d", max(0, rest.Seconds()/secs), runtime.NumCPU())
		}
		p("\n")
	}
}

// printServers prints several servers' memory and descriptors, one line
// each: before the load, its peak, after the sessions closed, and the CPU
// it used during the load, in cores.
func (r *result) printServers(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	secs := r.elapsed.Seconds()
	p("\nserver processes: RSS and fds before (idle) → peak during load → after (sessions closed)\n")
	p("  %-3s %8s %8s %7s   %-22s %-14s %5s\n", "#", "pid", "calls", "errors", "RSS MiB", "fds", "CPU")
	var cpu time.Duration
	for i, sr := range r.servers {
		if sr.pid == 0 {
			p("  #%-2d %8s %8d %7d   (not sampled)\n", i+1, "-", sr.calls, sr.errors)
			continue
		}
		peak := sr.endOfLoad
		for _, s := range sr.series {
			peak.RSS, peak.FDs = max(peak.RSS, s.RSS), max(peak.FDs, s.FDs)
		}
		mem := fmt.Sprintf("%.1f → %.1f → %.1f", float64(sr.before.RSS)/(1<<20), float64(peak.RSS)/(1<<20), float64(sr.after.RSS)/(1<<20))
		fds := fmt.Sprintf("%d → %d → %d", sr.before.FDs, peak.FDs, sr.after.FDs)
		used := "-"
		if len(sr.series) > 0 && secs > 0 {
			d := sr.endOfLoad.CPU - sr.series[0].CPU
			cpu += d
			used = fmt.Sprintf("%.2f", d.Seconds()/secs)
		}
		p("  #%-2d %8d %8d %7d   %-22s %-14s %5s\n", i+1, sr.pid, sr.calls, sr.errors, mem, fds, used)
	}
	if secs > 0 {
		p("  CPU during load, in cores: servers %.2f, load generator %.2f", cpu.Seconds()/secs, r.loaderCPU.Seconds()/secs)
		if r.machineCPU > 0 {
			rest := r.machineCPU - cpu - r.loaderCPU
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
