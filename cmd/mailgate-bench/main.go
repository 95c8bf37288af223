// Command mailgate-bench measures mailgate's mailbox tool set
// (MAILGATE_TOOLS=mailbox) and, when its binary is given, the four-tool
// server it replaces (UserAd/AgentMail's `agentmail mcp`) side by side in
// one run, in one private tmux server, and prints the ratios:
//
//	go build -o bin/mailgate ./cmd/mailgate
//	PEER_AGENTMAIL=/tmp/agentmail go run ./cmd/mailgate-bench -mailgate bin/mailgate
//
// (`make bench-peers` runs the same.) Each server runs as a client would
// start it, over stdio, with the environment of a tmux window (TMUX,
// TMUX_PANE) of a session with the windows alice and bob, in a fresh git
// repository of its own (the peer keeps its store at the git root). The
// phases, each -calls calls from one client, one at a time:
//
//   - send: alice sends to bob;
//   - receive: bob receives the mail that piled up, oldest first (its p50
//     over the first and the last tenth shows whether the cost grows with
//     the mailbox);
//   - status + list-recipients: alice alternates the two.
//
// The two servers take turns: each phase is cut into ten slices and the
// subjects alternate slice by slice (start-ups too), so the machine's load
// weighs on both alike. It also reports the time from starting a server to
// its answer to initialize (median of -starts, 5 by default) with the CPU
// the server had used by then, and memory counting every process a server
// started (its resident set and its children's): after tools/list, and for
// both agents' servers after the run. Without PEER_AGENTMAIL
// (or -peer) it measures mailgate alone. Nothing outside its temporary
// directory is written, and the tmux server it starts is killed at the end.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	mailgate, peer string
	calls          int
	starts         int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mailgate-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.mailgate, "mailgate", "bin/mailgate", "the mailgate binary (`PATH`)")
	fs.StringVar(&cfg.peer, "peer", os.Getenv("PEER_AGENTMAIL"), "the four-tool peer's binary, UserAd/AgentMail's agentmail (`PATH`; default $PEER_AGENTMAIL; empty: mailgate alone)")
	fs.IntVar(&cfg.calls, "calls", 1000, "calls per phase")
	fs.IntVar(&cfg.starts, "starts", 5, "start-ups of each server, in turns (their medians are reported)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if cfg.calls < 10 || cfg.calls > 100000 {
		fmt.Fprintln(stderr, "mailgate-bench: -calls wants 10 to 100000")
		return 2
	}
	if cfg.starts < 1 || cfg.starts > 1000 {
		fmt.Fprintln(stderr, "mailgate-bench: -starts wants 1 to 1000")
		return 2
	}
	if err := bench(ctx, cfg, stdout); err != nil {
		fmt.Fprintln(stderr, "mailgate-bench:", err)
		return 1
	}
	return 0
}

// subject is one server implementation under test.
type subject struct {
	name string
	bin  string
	args []string
	env  []string // on top of PATH, HOME, TMUX, TMUX_PANE
}

// result is one subject's figures.
type result struct {
	start, rss                 []float64 // ms to the initialize answer; MiB after tools/list
	startCPU                   []float64 // ms of CPU the server had used when its initialize answer came
	send, receive, statusList  []time.Duration
	sendTime, recvTime, stTime time.Duration
	recvFirst, recvLast        time.Duration // p50 of the first and last tenth of receives
	rssEnd                     float64       // MiB, both agents' servers and their children, after the phases
}

func bench(ctx context.Context, cfg config, w io.Writer) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		return errors.New("tmux is not installed: the comparison runs both servers in one tmux session")
	}
	tmp, err := os.MkdirTemp("", "mgbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	sock := filepath.Join(tmp, "s")
	tm := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("tmux %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := tm("new-session", "-d", "-s", "bench", "-n", "alice", "sleep 3600"); err != nil {
		return err
	}
	defer tm("kill-server")
	if _, err := tm("new-window", "-d", "-t", "bench", "-n", "bob", "sleep 3600"); err != nil {
		return err
	}
	pid, err := tm("display-message", "-p", "#{pid}")
	if err != nil {
		return err
	}
	panes := map[string]string{}
	for _, win := range []string{"alice", "bob"} {
		if panes[win], err = tm("list-panes", "-t", "bench:"+win, "-F", "#{pane_id}"); err != nil {
			return err
		}
	}
	version, _ := tm("-V")
	tmuxVar := sock + "," + pid + ",0"

	mg, err := filepath.Abs(cfg.mailgate)
	if err != nil {
		return err
	}
	subjects := []subject{{name: "mailgate", bin: mg, args: []string{"serve"},
		env: []string{"MAILGATE_TOOLS=mailbox", "MAILGATE_LOG_LEVEL=warn"}}}
	if cfg.peer != "" {
		peer, err := filepath.Abs(cfg.peer)
		if err != nil {
			return err
		}
		subjects = append(subjects, subject{name: "peer (agentmail mcp)", bin: peer, args: []string{"mcp"}})
	}
	envs := make([]func(string) []string, len(subjects))
	dirs := make([]string, len(subjects))
	for i, s := range subjects {
		// The project (a git work tree, where both servers keep their
		// mailboxes) and the home side by side: mailgate refuses a project
		// folder that holds its home.
		home, dir := filepath.Join(tmp, strconv.Itoa(i), "home"), filepath.Join(tmp, strconv.Itoa(i), "project")
		if err := os.MkdirAll(home, 0o700); err != nil {
			return err
		}
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("git init: %v: %s", err, out)
		}
		dirs[i] = dir
		envs[i] = func(win string) []string {
			return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
				"MAILGATE_HOME=" + home, "TMUX=" + tmuxVar, "TMUX_PANE=" + panes[win]}, s.env...)
		}
	}
	results, err := measure(ctx, subjects, dirs, envs, cfg.calls, cfg.starts)
	if err != nil {
		return err
	}
	report(w, cfg, version, subjects, results)
	return nil
}

// server is one running subject with its client session.
type server struct {
	cs  *mcp.ClientSession
	cmd *exec.Cmd
}

// start starts a server and connects to it. It returns the time to the
// initialize answer, the CPU the server had used by then (ms: less
// sensitive to the machine's load than the time), and its memory (with its
// children's) after tools/list.
func start(ctx context.Context, s subject, dir string, env []string) (server, time.Duration, float64, float64, error) {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir, cmd.Env = dir, env // stderr discarded: the peer logs every start there
	c := mcp.NewClient(&mcp.Implementation{Name: "mailgate-bench", Version: "1"}, nil)
	t0 := time.Now()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return server{}, 0, 0, 0, err
	}
	startup := time.Since(t0)
	cpu := cpuMs(cmd.Process.Pid)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		cs.Close()
		return server{}, 0, 0, 0, err
	}
	return server{cs: cs, cmd: cmd}, startup, cpu, treeRSSMiB(cmd.Process.Pid), nil
}

// cpuMs is the CPU time a process's threads have run, in ms
// (/proc/<pid>/task/*/schedstat), 0 when unknown.
func cpuMs(pid int) float64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns float64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseFloat(f[0], 64)
			ns += v
		}
	}
	return ns / 1e6
}

// treeRSSMiB is the resident set (VmRSS) of a process and of every process
// it started, in MiB: a server's children (mailgate's tmux control-mode
// client) are its memory too. 0 when unknown.
func treeRSSMiB(pid int) float64 {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces, so split after ')'.
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if i < 0 || len(f) < 2 {
			continue
		}
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], child)
	}
	var sum float64
	var walk func(int)
	walk = func(p int) {
		sum += rssMiB(p)
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return sum
}

// rssMiB is a process's resident set (VmRSS) in MiB, 0 when unknown.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func call(ctx context.Context, s server, tool string, args map[string]any) (string, time.Duration, error) {
	t0 := time.Now()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	d := time.Since(t0)
	if err != nil {
		return "", d, err
	}
	var text string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text += t.Text
		}
	}
	if res.IsError {
		return text, d, fmt.Errorf("%s answered an error: %s", tool, text)
	}
	return text, d, nil
}

// rounds is how many slices each phase is cut into. The subjects take
// turns slice by slice (the first to go alternates), so that the machine's
// load, which drifts over a run, falls on both alike: measured one after the
// other, a busy minute once halved one subject's rate and not the other's.
const rounds = 10

// measure runs every phase for every subject, interleaved.
func measure(ctx context.Context, subjects []subject, dirs []string, envs []func(string) []string, n, starts int) ([]result, error) {
	rs := make([]result, len(subjects))
	fail := func(i int, err error) ([]result, error) { return nil, fmt.Errorf("%s: %w", subjects[i].name, err) }
	order := func(round int) []int { // 0,1 then 1,0, …
		o := make([]int, len(subjects))
		for k := range o {
			o[k] = (k + round) % len(subjects)
		}
		return o
	}
	// Start-up, starts times each, in turns (the last pair serves the phases).
	alice, bob := make([]server, len(subjects)), make([]server, len(subjects))
	for round := 0; round < starts; round++ {
		for _, i := range order(round) {
			a, d, cpu, rss, err := start(ctx, subjects[i], dirs[i], envs[i]("alice"))
			if err != nil {
				return fail(i, fmt.Errorf("starting: %w", err))
			}
			rs[i].start, rs[i].rss = append(rs[i].start, float64(d.Microseconds())/1000), append(rs[i].rss, rss)
			rs[i].startCPU = append(rs[i].startCPU, cpu)
			if round < starts-1 {
				a.cs.Close()
				continue
			}
			alice[i] = a
			defer a.cs.Close()
		}
	}
	for i := range subjects {
		b, _, _, _, err := start(ctx, subjects[i], dirs[i], envs[i]("bob"))
		if err != nil {
			return fail(i, err)
		}
		bob[i] = b
		defer b.cs.Close()
		// Both agents announce themselves, as hooks do at session start.
		for _, sv := range []server{alice[i], bob[i]} {
			if _, _, err := call(ctx, sv, "status", map[string]any{"status": "ready"}); err != nil {
				return fail(i, err)
			}
		}
	}

	// phase runs one phase's calls, slice by slice in turns; call(i, k) is
	// subject i's k-th call.
	phase := func(ds func(*result) *[]time.Duration, total func(*result) *time.Duration, call func(i, k int) (time.Duration, error)) error {
		for round := 0; round < rounds; round++ {
			from, to := n*round/rounds, n*(round+1)/rounds
			for _, i := range order(round) {
				t0 := time.Now()
				for k := from; k < to; k++ {
					d, err := call(i, k)
					if err != nil {
						_, err = fail(i, err)
						return err
					}
					*ds(&rs[i]) = append(*ds(&rs[i]), d)
				}
				*total(&rs[i]) += time.Since(t0)
			}
		}
		return nil
	}
	if err := phase(func(r *result) *[]time.Duration { return &r.send }, func(r *result) *time.Duration { return &r.sendTime },
		func(i, k int) (time.Duration, error) {
			_, d, err := call(ctx, alice[i], "send", map[string]any{"recipient": "bob", "message": fmt.Sprintf("message %d from alice: the build is green again", k)})
			return d, err
		}); err != nil {
		return nil, err
	}
	if err := phase(func(r *result) *[]time.Duration { return &r.receive }, func(r *result) *time.Duration { return &r.recvTime },
		func(i, k int) (time.Duration, error) {
			text, d, err := call(ctx, bob[i], "receive", nil)
			if err != nil {
				return d, err
			}
			var m struct{ Message string }
			if json.Unmarshal([]byte(text), &m) != nil || !strings.HasPrefix(m.Message, fmt.Sprintf("message %d ", k)) {
				return d, fmt.Errorf("receive %d answered %q", k, text)
			}
			return d, nil
		}); err != nil {
		return nil, err
	}
	if err := phase(func(r *result) *[]time.Duration { return &r.statusList }, func(r *result) *time.Duration { return &r.stTime },
		func(i, k int) (time.Duration, error) {
			if k%2 == 0 {
				_, d, err := call(ctx, alice[i], "status", map[string]any{"status": []string{"work", "ready"}[k/2%2]})
				return d, err
			}
			text, d, err := call(ctx, alice[i], "list-recipients", nil)
			if err == nil && !strings.Contains(text, "bob") {
				err = fmt.Errorf("list-recipients answered %q", text)
			}
			return d, err
		}); err != nil {
		return nil, err
	}
	tenth := max(n/10, 1)
	for i := range rs {
		rs[i].recvFirst, rs[i].recvLast = pct(rs[i].receive[:tenth], 50), pct(rs[i].receive[n-tenth:], 50)
		// Memory at the end of the run, every process each server started
		// counted (mailgate's tmux control-mode client included).
		rs[i].rssEnd = treeRSSMiB(alice[i].cmd.Process.Pid) + treeRSSMiB(bob[i].cmd.Process.Pid)
	}
	return rs, nil
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

func report(w io.Writer, cfg config, tmuxVersion string, subjects []subject, rs []result) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "mailbox set, %d calls per phase, one client, one call at a time; %s, %d CPUs (%s), %s, %s\n\n",
		cfg.calls, tmuxVersion, runtime.NumCPU(), host, runtime.Version(), time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "%-34s", "")
	for _, s := range subjects {
		fmt.Fprintf(w, "%-34s", s.name)
	}
	if len(rs) == 2 {
		fmt.Fprint(w, "mailgate ÷ peer")
	}
	fmt.Fprintln(w)
	type row struct {
		name  string
		cell  func(result) string
		ratio func(a, b result) string
	}
	phase := func(name string, ds func(result) []time.Duration, total func(result) time.Duration) []row {
		r := func(x result) float64 { return rate(len(ds(x)), total(x)) }
		return []row{
			{name, func(x result) string {
				return fmt.Sprintf("%.0f/s, p50 %s, p99 %s", r(x), ms(pct(ds(x), 50)), ms(pct(ds(x), 99)))
			}, func(a, b result) string {
				return fmt.Sprintf("%.1f× the rate, p99 ÷ %.1f", r(a)/r(b), float64(pct(ds(b), 99))/float64(pct(ds(a), 99)))
			}},
		}
	}
	rows := phase("send", func(x result) []time.Duration { return x.send }, func(x result) time.Duration { return x.sendTime })
	rows = append(rows, phase("receive", func(x result) []time.Duration { return x.receive }, func(x result) time.Duration { return x.recvTime })...)
	rows = append(rows, row{"  receive p50, first/last tenth", func(x result) string {
		return fmt.Sprintf("%s / %s", ms(x.recvFirst), ms(x.recvLast))
	}, func(a, b result) string {
		return fmt.Sprintf("last tenth ÷ first: %.2f vs %.2f", float64(a.recvLast)/float64(a.recvFirst), float64(b.recvLast)/float64(b.recvFirst))
	}})
	rows = append(rows, phase("status + list-recipients", func(x result) []time.Duration { return x.statusList }, func(x result) time.Duration { return x.stTime })...)
	rows = append(rows, row{"start to initialize answer", func(x result) string {
		return fmt.Sprintf("%.1f ms median of %d", median(x.start), len(x.start))
	}, func(a, b result) string { return fmt.Sprintf("%.1f× the time", median(a.start)/median(b.start)) }})
	rows = append(rows, row{"  CPU used by then", func(x result) string {
		return fmt.Sprintf("%.1f ms median", median(x.startCPU))
	}, func(a, b result) string { return fmt.Sprintf("%.1f× the CPU", median(a.startCPU)/median(b.startCPU)) }})
	rows = append(rows, row{"RSS after tools/list", func(x result) string {
		return fmt.Sprintf("%.1f MiB median", median(x.rss))
	}, func(a, b result) string { return fmt.Sprintf("%.1f× the memory", median(a.rss)/median(b.rss)) }})
	rows = append(rows, row{"RSS of two servers after the run", func(x result) string {
		return fmt.Sprintf("%.1f MiB", x.rssEnd)
	}, func(a, b result) string { return fmt.Sprintf("%.1f× the memory", a.rssEnd/b.rssEnd) }})
	for _, rw := range rows {
		fmt.Fprintf(w, "%-34s", rw.name)
		for _, r := range rs {
			fmt.Fprintf(w, "%-34s", rw.cell(r))
		}
		if len(rs) == 2 {
			fmt.Fprint(w, rw.ratio(rs[0], rs[1]))
		}
		fmt.Fprintln(w)
	}
}
