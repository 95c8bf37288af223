package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentMailSession starts `mailgate serve` with only the agent-mail tools on
// a fresh store, over stdio, and registers two agents in one project.
func agentMailSession(b *testing.B) (*mcp.ClientSession, string) {
	b.Helper()
	home := b.TempDir()
	project := b.TempDir()
	cmd := exec.Command(builtBinary(b), "serve")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=agentmail", "MAILGATE_LOG_LEVEL=warn"}
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
	return cs, project
}

func sendArgsAM(project string, i int) map[string]any {
	return map[string]any{"project_key": project, "sender_name": "BlueLake", "to": []string{"GreenCastle"},
		"subject": fmt.Sprintf("status %d", i), "body_md": "Build is green; moving on to the parser."}
}

// BenchmarkStdioSendMessage: one client, one call at a time, over stdio to a
// separate mailgate process (what one agent's client does).
func BenchmarkStdioSendMessage(b *testing.B) {
	cs, project := agentMailSession(b)
	lat := make([]time.Duration, 0, b.N)
	i := 0
	start := time.Now()
	for b.Loop() {
		t0 := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_message", Arguments: sendArgsAM(project, i)})
		if err != nil || res.IsError {
			b.Fatalf("send_message: %v %+v", err, res)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	reportLatency(b, lat, time.Since(start))
}

// BenchmarkStdioSendMessagePipelined: one client keeping 8 calls in flight
// on its one stdio session (MCP allows concurrent requests).
func BenchmarkStdioSendMessagePipelined(b *testing.B) {
	cs, project := agentMailSession(b)
	const inflight = 8
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	next := make(chan int)
	var wg sync.WaitGroup
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
