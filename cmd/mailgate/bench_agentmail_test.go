package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentMailCommand is `mailgate serve` with only the agent-mail tools on a
// fresh store.
//
// The server's environment is its own, but for the runtime's and the
// profile's settings (GOGC, GODEBUG, GOMAXPROCS; a binary built with -tags
// pprof reads MAILGATE_CPUPROFILE, see pprof_tag.go), passed on when set.
func agentMailCommand(b *testing.B) *exec.Cmd {
	cmd := exec.Command(builtBinary(b), "serve")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + b.TempDir(), "MAILGATE_TOOLS=agentmail", "MAILGATE_LOG_LEVEL=warn"}
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GODEBUG", "GOMAXPROCS", "MAILGATE_CPUPROFILE", "MAILGATE_PROFILE_SECONDS"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	return cmd
}

// agentMailSession starts agentMailCommand over stdio through a go-sdk
// client and registers two agents in one project.
func agentMailSession(b *testing.B) (*mcp.ClientSession, string, *exec.Cmd) {
	b.Helper()
	cmd := agentMailCommand(b)
	project := b.TempDir()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	mustCall := func(name string, args map[string]any) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	mustCall("ensure_project", map[string]any{"human_key": project})
	mustCall("register_agent", map[string]any{"project_key": project, "name": "BlueLake", "program": "bench", "model": "x"})
	mustCall("register_agent", map[string]any{"project_key": project, "name": "GreenCastle", "program": "bench", "model": "x"})
	return cs, project, cmd
}

func sendArgsAM(project string, i int) map[string]any {
	return map[string]any{"project_key": project, "sender_name": "BlueLake", "to": []string{"GreenCastle"},
		"subject": fmt.Sprintf("status %d", i), "body_md": "Build is green; moving on to the parser."}
}

// BenchmarkStdioSendMessage: one client, one call at a time, over stdio to a
// separate mailgate process (what one agent's client does).
func BenchmarkStdioSendMessage(b *testing.B) {
	cs, project, cmd := agentMailSession(b)
	sendOneByOne(b, cmd, func(i int) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_message", Arguments: sendArgsAM(project, i)})
		if err != nil || res.IsError {
			b.Fatalf("send_message: %v %+v", err, res)
		}
	})
}

// sendOneByOne times send(0), send(1), … for the benchmark's loop, one at a
// time, and reports their latencies and the server's CPU per call.
func sendOneByOne(b *testing.B, cmd *exec.Cmd, send func(i int)) {
	lat := make([]time.Duration, 0, b.N)
	cpu := startCPU(cmd)
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		send(i)
		lat = append(lat, time.Since(t0))
	}
	reportLatency(b, lat, time.Since(start))
	cpu.report(b, len(lat))
}

// BenchmarkStdioSendMessagePipelined: one client keeping 8 calls in flight
// on its one stdio session (MCP allows concurrent requests).
func BenchmarkStdioSendMessagePipelined(b *testing.B) {
	cs, project, cmd := agentMailSession(b)
	const inflight = 8
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	next := make(chan int)
	var wg sync.WaitGroup
	cpu := startCPU(cmd)
	start := time.Now()
	for w := 0; w < inflight; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_message", Arguments: sendArgsAM(project, i)})
				if err != nil || res.IsError {
					b.Errorf("send_message: %v %+v", err, res)
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	i := 0
	for b.Loop() {
		next <- i
		i++
	}
	close(next)
	wg.Wait()
	reportLatency(b, lat, time.Since(start))
	cpu.report(b, len(lat))
}

func reportLatency(b *testing.B, lat []time.Duration, total time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(len(lat))/total.Seconds(), "sends/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "ms-p99")
}

// cpuMeter measures the CPU time (user + system, all threads) the server
// process and this benchmark's process spend over a run, from /proc: on a
// shared machine a call's CPU cost varies far less than its latency.
type cpuMeter struct {
	pid            int
	server, client time.Duration
	ok             bool
}

func startCPU(cmd *exec.Cmd) cpuMeter {
	m := cpuMeter{pid: cmd.Process.Pid}
	var err1, err2 error
	m.server, err1 = procCPU(m.pid)
	m.client, err2 = procCPU(os.Getpid())
	m.ok = err1 == nil && err2 == nil
	return m
}

// report adds the server's and the client's CPU per call, in µs.
func (m cpuMeter) report(b *testing.B, calls int) {
	if !m.ok || calls == 0 {
		return // no /proc here
	}
	server, err1 := procCPU(m.pid)
	client, err2 := procCPU(os.Getpid())
	if err1 != nil || err2 != nil {
		return
	}
	b.ReportMetric(float64((server-m.server).Microseconds())/float64(calls), "server-µs-cpu/op")
	b.ReportMetric(float64((client-m.client).Microseconds())/float64(calls), "client-µs-cpu/op")
	if peak, err := procPeakRSS(m.pid); err == nil {
		b.ReportMetric(peak, "server-MiB-peak")
	}
}

// procPeakRSS is a process's peak resident memory in MiB (VmHWM).
func procPeakRSS(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// procCPU is a process's utime + stime from /proc/PID/stat (clock ticks of
// 10 ms, USER_HZ on Linux: at thousands of calls the rounding is below 1%).
func procCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it don't.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("parsing /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("parsing /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parsing /proc/%d/stat", pid)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// BenchmarkStdioSendMessageRaw: one call at a time, as BenchmarkStdioSendMessage,
// from a client that writes each request as one prepared line and reads the
// answer's line, checking only its id and that it is no error: the server's
// share of a round trip, without go-sdk's client (which costs about as much
// CPU per call as the server; agents' clients are not go-sdk).
func BenchmarkStdioSendMessageRaw(b *testing.B) {
	cmd := agentMailCommand(b)
	project := b.TempDir()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	r := bufio.NewReaderSize(stdout, 64<<10)
	id := 0
	// call sends one request line and returns its answer's line.
	call := func(method string, params any) []byte {
		id++
		line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := stdin.Write(append(line, '\n')); err != nil {
			b.Fatal(err)
		}
		return readAnswer(b, r, id)
	}
	call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "0"}})
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	tool := func(name string, args map[string]any) []byte {
		return call("tools/call", map[string]any{"name": name, "arguments": args})
	}
	tool("ensure_project", map[string]any{"human_key": project})
	tool("register_agent", map[string]any{"project_key": project, "name": "BlueLake", "program": "bench", "model": "x"})
	tool("register_agent", map[string]any{"project_key": project, "name": "GreenCastle", "program": "bench", "model": "x"})
	sendOneByOne(b, cmd, func(i int) { tool("send_message", sendArgsAM(project, i)) })
}

// readAnswer reads lines until the answer to id, and fails on an error
// answer (JSON-RPC or a tool's isError).
func readAnswer(b *testing.B, r *bufio.Reader, id int) []byte {
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			b.Fatalf("reading the answer to %d: %v", id, err)
		}
		var head struct {
			ID     *int            `json:"id"`
			Error  json.RawMessage `json:"error"`
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			b.Fatalf("answer %q: %v", line, err)
		}
		if head.ID == nil || *head.ID != id {
			continue // a notification
		}
		if head.Error != nil || head.Result.IsError {
			b.Fatalf("call %d failed: %s", id, line)
		}
		return line
	}
}
