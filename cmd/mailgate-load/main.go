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
//
// With -db the spawned servers use a PostgreSQL database instead of their
// homes' SQLite files, and -servers starts several of them on it, as
// servers on several hosts would share one database; client i talks to
// server i mod N, and the report has one line per server:
//
//	go run ./cmd/mailgate-load -spawn bin/mailgate -servers 3 -db 'postgres://…' -clients 30 -duration 60s
//
// Nothing in that database is dropped or cleaned: each run works in a
// project of its own (the project key gets a random suffix), so runs on one
// database do not see each other's agents and messages.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Bounds on the flags: the tool is meant for a bounded run on one machine.
const (
	maxClients  = 500
	maxDuration = 30 * time.Minute
	maxServers  = 16
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
	db       string  // with -spawn: the spawned servers' MAILGATE_DB (a postgres:// URL); "" = SQLite in each home
	dbName   string  // db without its password, for the report: user@host:port/db
	servers  int     // with -spawn: how many servers to start
	project  string  // the project key every client joins
}

func main() {
	// The clients share the machine with the server they load: the less
	// they spend collecting garbage (go-sdk allocates a 32 KiB buffer for
	// each message it decodes), the less they take from it. GOGC, when set,
	// stays the user's.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
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
	fs.StringVar(&cfg.db, "db", "", "with -spawn: a PostgreSQL `URL` (postgres:// or postgresql://) the spawned servers use as MAILGATE_DB instead of the SQLite file of their throwaway homes. "+
		"Nothing in the database is dropped or cleaned up: each run starts clean in a project of its own ("+projectKey+"-<random suffix>), so runs on one database do not interfere (they do accumulate: drop the database to reclaim the space)")
	fs.IntVar(&cfg.servers, "servers", 1, fmt.Sprintf("with -spawn: start this many servers (at most %d), each in its own throwaway home with the same token, and spread the clients round-robin over them (client i talks to server i mod N); more than 1 needs -db, as separate SQLite homes share no store", maxServers))
	fs.StringVar(&cfg.token, "token", "", "bearer token (default $AGENT_MAIL_BEARER_TOKEN; with -spawn, a random one when unset; mailgate refuses one under 32 characters)")
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
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.servers < 1 || cfg.servers > maxServers {
		return cfg, fmt.Errorf("-servers %d: want 1 to %d", cfg.servers, maxServers)
	}
	if cfg.spawn == "" && set["servers"] {
		return cfg, errors.New("-servers needs -spawn: it is how many servers to start (a running server given by -url is one)")
	}
	if cfg.spawn == "" && set["db"] {
		return cfg, errors.New("-db needs -spawn: it is the store of the servers started here (a running server given by -url has its own)")
	}
	if set["db"] {
		name, err := describeDB(cfg.db)
		if err != nil {
			return cfg, fmt.Errorf("-db: %w", err)
		}
		cfg.dbName = name
	}
	if cfg.servers > 1 && cfg.db == "" {
		return cfg, fmt.Errorf("-servers %d needs -db postgres://…: each spawned server has its own throwaway home, and separate SQLite files there would not share a store", cfg.servers)
	}
	if cfg.clients < cfg.servers {
		return cfg, fmt.Errorf("-clients %d for -servers %d: want at least one client per server (client i talks to server i mod N)", cfg.clients, cfg.servers)
	}
	cfg.project = projectKey
	if cfg.db != "" {
		// A shared database keeps what earlier runs wrote: a project of
		// its own gives this run a clean start without dropping anything.
		var b [4]byte
		rand.Read(b[:])
		cfg.project += "-" + hex.EncodeToString(b[:])
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

// describeDB checks that raw is a PostgreSQL URL the server will accept
// and names it without its password: user@host:port/db. Nothing connects.
func describeDB(raw string) (string, error) {
	if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") {
		shown := raw
		if i := strings.Index(shown, "://"); i >= 0 {
			shown = shown[:i+3] + "…"
		}
		return "", fmt.Errorf("%q: only postgres:// or postgresql:// URLs (without -db the spawned server keeps its throwaway SQLite store)", shown)
	}
	c, err := pgconn.ParseConfig(raw)
	if err != nil {
		// pgconn redacts the password in its errors, on a best-effort
		// basis; make sure of it.
		msg := err.Error()
		if u, uerr := url.Parse(raw); uerr == nil {
			if pw, ok := u.User.Password(); ok && pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
			if pw := u.Query().Get("password"); pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
		}
		return "", fmt.Errorf("not a valid PostgreSQL URL: %s", msg)
	}
	host := c.Host
	if host != "" && host[0] != '/' {
		host = net.JoinHostPort(host, strconv.Itoa(int(c.Port)))
	}
	return c.User + "@" + host + "/" + c.Database, nil
}

// execute runs one load: sample the idle servers, connect and register
// every client, run the mix until the deadline, close the sessions, sample
// again, and stop the servers if they were spawned here.
func execute(ctx context.Context, cfg config, progress io.Writer) (*result, error) {
	if cfg.project == "" {
		cfg.project = projectKey
	}
	res := &result{cfg: cfg, loadBefore: loadAvg()}
	if cfg.spawn == "" {
		res.servers = []*serverRun{{endpoint: cfg.url, pid: cfg.pid}}
		if err := runLoad(ctx, cfg, res, progress); err != nil {
			return nil, err
		}
		return res, nil
	}
	srvs, err := startServers(ctx, cfg.spawn, cfg.token, cfg.db, max(cfg.servers, 1))
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range srvs {
			s.cleanup()
		}
	}()
	res.spawned, cfg.token = true, srvs[0].token
	res.cfg = cfg
	for _, s := range srvs {
		res.servers = append(res.servers, &serverRun{endpoint: s.url, pid: s.pid})
	}
	loadErr := runLoad(ctx, cfg, res, progress)
	// SIGTERM to every server at once: each may take a while to finish its
	// in-flight calls, and they are independent.
	var wg sync.WaitGroup
	for i, s := range srvs {
		wg.Go(func() {
			sr := res.servers[i]
			sr.shutdown = s.stop()
			sr.clean, sr.problems = s.clean(), s.problems()
		})
	}
	wg.Wait()
	if loadErr != nil {
		// The servers' own complaints usually say why the clients failed.
		return nil, fmt.Errorf("%w%s", loadErr, indent(res.problems()))
	}
	return res, nil
}

// runLoad does the client side of execute, filling res.
func runLoad(ctx context.Context, cfg config, res *result, progress io.Writer) error {
	var sampled []*serverRun
	for _, sr := range res.servers {
		if sr.pid == 0 {
			continue
		}
		before, err := readProc(sr.pid)
		if err != nil {
			return fmt.Errorf("sampling the server: %w", err)
		}
		sr.before, sr.procName = before, procName(sr.pid)
		sr.smp = newSampler(sr.pid)
		sampled = append(sampled, sr)
	}
	endpoints := make([]string, len(res.servers))
	for i, sr := range res.servers {
		endpoints[i] = sr.endpoint
	}
	w := newWorkload(cfg, endpoints, cfg.token)
	defer w.close()
	if err := w.setup(ctx); err != nil {
		return err
	}
	for _, sr := range sampled {
		sr.smp.start(time.Second)
	}
	loaderStart, machineStart := selfCPU(), machineCPU()
	res.stats, res.elapsed = w.run(ctx, progress)
	res.loaderCPU, res.machineCPU = selfCPU()-loaderStart, machineCPU()-machineStart
	res.interrupted = ctx.Err() != nil
	for _, sr := range sampled {
		sr.series = sr.smp.finish()
	}
	for _, sr := range sampled {
		sr.endOfLoad, _ = readProc(sr.pid)
	}
	for i, sr := range res.servers {
		sr.calls, sr.errors = w.perServer(i)
	}
	w.close()
	var wg sync.WaitGroup
	for _, sr := range sampled {
		wg.Go(func() { sr.after = settle(sr.pid, sr.before) })
	}
	wg.Wait()
	res.loadAfter = loadAvg()
	return nil
}
