// Command mailgate-load drives N concurrent agent-mail clients against
// `mailgate serve --http` with a mixed workload (send, fetch inbox, search,
// reserve/release) and prints throughput, latency percentiles, errors, and
// the server's RSS and open descriptors before, during and after the load.
//
//	go build -o bin/mailgate ./cmd/mailgate
//	go run ./cmd/mailgate-load -spawn bin/mailgate -clients 30 -duration 60s
//
// With -spawn it starts and stops its own server in a throwaway home; with
// -url it loads a running one (-pid to sample it). It only talks to loopback
// addresses and stops by itself at the end of -duration. The exit status is
// 0 only when every call succeeded.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Bounds on the flags: the tool is meant for a bounded run on one machine.
const (
	maxClients  = 500
	maxDuration = 30 * time.Minute
)

type config struct {
	url      string
	token    string
	clients  int
	duration time.Duration
	pid      int
	spawn    string
	mix      []mixEntry
	rate     float64 // total calls per second; 0 = closed loop
	protocol string  // MCP protocol version offered; "" = the SDK's latest
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is main without the process: 0 when every call succeeded, 1 when the
// run failed or saw errors, 2 for bad flags.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "mailgate-load:", err)
		return 2
	}
	res, err := execute(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mailgate-load:", err)
		return 1
	}
	res.print(stdout)
	if !res.ok() {
		return 1
	}
	return 0
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("mailgate-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.url, "url", "http://127.0.0.1:8765/mcp/", "Streamable HTTP endpoint of a running server (loopback only; ignored with -spawn). The load writes into its store, in project "+projectKey)
	fs.StringVar(&cfg.token, "token", "", "bearer token (default $AGENT_MAIL_BEARER_TOKEN; with -spawn, a random one when unset)")
	fs.IntVar(&cfg.clients, "clients", 30, "concurrent agent clients, one MCP session each")
	fs.DurationVar(&cfg.duration, "duration", 60*time.Second, "how long the clients run the mix")
	fs.IntVar(&cfg.pid, "pid", 0, "server process id to sample RSS and descriptors from /proc (optional; set by -spawn)")
	fs.StringVar(&cfg.spawn, "spawn", "", "start the mailgate binary at `PATH` as serve --http 127.0.0.1:0, in a temporary home with MAILGATE_TOOLS=agentmail, and load it")
	mix := fs.String("mix", "send=40,fetch=30,search=20,reserve=10", "relative weights of send, fetch, search and reserve (reserve = file_reservation_paths then release_file_reservations)")
	fs.Float64Var(&cfg.rate, "rate", 0, "pace all clients together at this many calls per second (0: each client calls back to back)")
	fs.StringVar(&cfg.protocol, "protocol", "2025-11-25", "MCP protocol version the clients offer (\"\": the SDK's latest)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if cfg.token == "" {
		cfg.token = getenv("AGENT_MAIL_BEARER_TOKEN")
	}
	if cfg.clients < 1 || cfg.clients > maxClients {
		return cfg, fmt.Errorf("-clients %d: want 1 to %d", cfg.clients, maxClients)
	}
	if cfg.duration <= 0 || cfg.duration > maxDuration {
		return cfg, fmt.Errorf("-duration %s: want more than 0 and at most %s", cfg.duration, maxDuration)
	}
	if cfg.rate < 0 {
		return cfg, fmt.Errorf("-rate %g: want 0 or more", cfg.rate)
	}
	if cfg.spawn != "" && cfg.pid != 0 {
		return cfg, errors.New("-pid and -spawn exclude each other: -spawn samples the server it starts")
	}
	var err error
	if cfg.mix, err = parseMix(*mix); err != nil {
		return cfg, fmt.Errorf("-mix: %w", err)
	}
	if cfg.spawn == "" {
		if err := checkLoopback(cfg.url); err != nil {
			return cfg, fmt.Errorf("-url: %w", err)
		}
	}
	return cfg, nil
}

// checkLoopback refuses any endpoint off this machine: a load generator
// pointed at a shared server is a denial of service.
func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("parsing %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return fmt.Errorf("%q: only http:// loopback endpoints are supported", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q is not a loopback address (use 127.0.0.1, ::1 or localhost)", host)
}

// execute runs one load: sample the idle server, connect and register every
// client, run the mix until the deadline, close the sessions, sample again,
// and stop the server if it was spawned here.
func execute(ctx context.Context, cfg config, progress io.Writer) (*result, error) {
	res := &result{cfg: cfg, endpoint: cfg.url, pid: cfg.pid, loadBefore: loadAvg()}
	if cfg.spawn == "" {
		if err := runLoad(ctx, cfg, res, progress); err != nil {
			return nil, err
		}
		return res, nil
	}
	srv, err := startServer(ctx, cfg.spawn, cfg.token)
	if err != nil {
		return nil, err
	}
	defer srv.cleanup()
	res.spawned, res.endpoint, res.pid, cfg.token = true, srv.url, srv.pid, srv.token
	loadErr := runLoad(ctx, cfg, res, progress)
	res.shutdown, res.shutdownClean = srv.stop(), srv.clean()
	res.serverProblems = srv.problems()
	if loadErr != nil {
		// The server's own complaints usually say why the clients failed.
		return nil, fmt.Errorf("%w%s", loadErr, indent(res.serverProblems))
	}
	return res, nil
}

// runLoad does the client side of execute, filling res.
func runLoad(ctx context.Context, cfg config, res *result, progress io.Writer) error {
	var smp *sampler
	if res.pid != 0 {
		before, err := readProc(res.pid)
		if err != nil {
			return fmt.Errorf("sampling the server: %w", err)
		}
		res.before, res.procName = before, procName(res.pid)
		smp = newSampler(res.pid)
	}
	w := newWorkload(cfg, res.endpoint, cfg.token)
	defer w.close()
	if err := w.setup(ctx); err != nil {
		return err
	}
	if smp != nil {
		smp.start(time.Second)
	}
	loaderStart, machineStart := selfCPU(), machineCPU()
	res.stats, res.elapsed = w.run(ctx, progress)
	res.loaderCPU, res.machineCPU = selfCPU()-loaderStart, machineCPU()-machineStart
	res.interrupted = ctx.Err() != nil
	if smp != nil {
		res.series = smp.finish()
		res.endOfLoad, _ = readProc(res.pid)
	}
	w.close()
	if smp != nil {
		res.after = settle(res.pid, res.before.FDs)
	}
	res.loadAfter = loadAvg()
	return nil
}
