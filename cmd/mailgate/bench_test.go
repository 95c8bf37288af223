package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	initializeLine  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}` + "\n"
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	toolsListLine   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
)

// startRaw starts `mailgate serve` with raw pipes, as Claude Desktop does.
func startRaw(b *testing.B, w *world) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	cmd := exec.Command(builtBinary(b), "serve")
	cmd.Dir = "/"
	cmd.Env = w.env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return cmd, stdin, bufio.NewReader(stdout)
}

// BenchmarkColdStart measures process start to the first answer (the
// initialize result) with a real store, vault and credentials: what Claude
// Desktop waits for at launch. One sub-benchmark per tool selection.
func BenchmarkColdStart(b *testing.B) {
	for _, tools := range []string{"email", "agentmail", "email,agentmail", "mailbox"} {
		b.Run(strings.ReplaceAll(tools, ",", "+"), func(b *testing.B) {
			w := newWorld(b, true, "MAILGATE_TOOLS="+tools)
			var samples []time.Duration
			for b.Loop() {
				start := time.Now()
				cmd, stdin, out := startRaw(b, w)
				io.WriteString(stdin, initializeLine)
				if _, err := out.ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				samples = append(samples, time.Since(start))
				stdin.Close()
				cmd.Wait()
			}
			sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
			b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "ms-p50")
			b.ReportMetric(float64(samples[len(samples)*9/10].Microseconds())/1000, "ms-p90")
		})
	}
}

// BenchmarkRSSAfterToolsList reports the resident memory of a serving
// process once it has answered tools/list, per tool selection.
func BenchmarkRSSAfterToolsList(b *testing.B) {
	for _, tools := range []string{"email", "email,agentmail", "mailbox"} {
		b.Run(strings.ReplaceAll(tools, ",", "+"), func(b *testing.B) {
			w := newWorld(b, true, "MAILGATE_TOOLS="+tools)
			var worst float64
			for b.Loop() {
				cmd, stdin, out := startRaw(b, w)
				io.WriteString(stdin, initializeLine+initializedLine+toolsListLine)
				out.ReadString('\n')
				if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"tools"`) {
					b.Fatalf("tools/list: %q %v", line, err)
				}
				worst = max(worst, vmRSS(b, cmd.Process.Pid))
				stdin.Close()
				cmd.Wait()
			}
			b.ReportMetric(worst, "MiB-RSS")
		})
	}
}

func vmRSS(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
