package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// -approval-screenshots rewrites docs/approval-page-*.png from the browser
// test (README's "How approving works" shows them):
//
//	go test ./cmd/mailgate -run TestApprovalPageBrowser -approval-screenshots
var approvalScreenshots = flag.Bool("approval-screenshots", false, "write docs/approval-page-*.png")

// chromium returns the browser the page's tests drive, or skips: only
// when none is installed (make deps installs Debian's
// chromium-headless-shell, and CI runs make deps, so CI never skips).
// The headless shell comes first: Chromium's own engine (Blink, V8, the
// same Debian source and version) without the browser's window, tabs and
// address bar, which the test never uses and which cost CPU at every
// navigation (the package's test binary, perf stat, alternating, load
// ~17: 16.9-17.2 CPU s with chromium, 14.2-14.4 with the headless shell).
// A full browser still serves where it is the one installed.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed: the approval page's browser tests need it (make deps installs it: apt-get install chromium-headless-shell)")
	return ""
}

// browser starts a headless Chromium for the test and returns a wait for
// its first tab: the start (~1 s) runs while the test sets up.
func browser(t *testing.T) (wait func() context.Context) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 900),
		// A full browser, even headless, builds its window's address bar
		// and preloads the bar's suggestion popup, a web page (WebUI) of its
		// own in a renderer of its own, which the test never opens: about
		// a quarter of the test's CPU (perf stat, the test alone,
		// alternating: 6.2-7.7 CPU s with it, 4.6-6.0 without).
		// chromedp's own disabled features are kept.
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"),
		// One process: the browser, its renderer, GPU and network
		// service as threads of one process instead of five processes
		// talking over IPC, forked and torn down again as the test
		// navigates (~5 renderers in one run). The page, its scripts,
		// the sandboxed frame and the second tab are the same Blink and
		// V8; chromium's CPU over the test is ~20% less (perf stat,
		// the test alone, alternating, 5 runs each, medians).
		chromedp.Flag("single-process", true),
		// The compositor on the renderer's main thread instead of a thread
		// of its own: a headless page the test reads through DevTools has
		// no scrolling or animation to keep smooth, and each frame no
		// longer hops between threads (~20% less of the test's CPU, perf
		// stat, alternating, 6 runs each, medians).
		chromedp.Flag("disable-threaded-compositing", true),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox as root (CI containers)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	started := make(chan error, 1)
	go func() {
		err := chromedp.Do(ctx)
		if err == nil {
			err = quietTab(ctx)
		}
		started <- err
	}()
	return func() context.Context {
		t.Helper()
		if err := <-started; err != nil {
			t.Fatalf("starting chromium: %v", err)
		}
		return ctx
	}
}

// quietTab turns off the DevTools domains chromedp enables on a tab that
// the test never reads: CSS (the browser tracks and reports every style
// sheet of every page), Network (an event for every request and every
// server-sent event) and Log. Queries, clicks and navigation use DOM,
// Page and Runtime, and Network.getCookies answers without the domain
// on. ~8% of the test's CPU (perf stat, alternating, medians of 5).
func quietTab(ctx context.Context) error {
	// A tab attaches on its first action.
	if err := chromedp.Do(ctx); err != nil {
		return err
	}
	for _, disable := range []cdp.Command[cdp.Empty, cdp.Empty]{css.Disable, network.Disable, log.Disable} {
		if _, err := chromedp.Call(ctx, disable, cdp.Empty{}); err != nil {
			return err
		}
	}
	return nil
}

// startApprovalPage runs `mailgate approvals --web --no-open` in the world's
// home and returns the URL it prints.
func startApprovalPage(t *testing.T, w *world) string {
	t.Helper()
	cmd := exec.Command(builtBinary(t), "approvals", "--web", "--no-open")
	cmd.Env = w.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if strings.Contains(stderr.String(), "s=") {
			t.Errorf("the page logged something that may be its secret: %s", stderr.String())
		}
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "http://127.0.0.1:") {
			go func() { // keep the pipe drained
				for sc.Scan() {
				}
			}()
			return l
		}
	}
	t.Fatalf("approvals --web printed no URL; stderr: %s", stderr.String())
	return ""
}

func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*approvalScreenshots {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "approval-page-"+name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestApprovalPageBrowser drives the approval page in headless Chromium
// against the real binary (`mailgate approvals --web`), the real server
// (`mailgate serve` over stdio) and the local Gmail server: an HTML email
// with a remote image is shown with the image blocked and listed (and
// never fetched); an approval on the page is sent exactly once; a
// rejection's reason reaches the agent's next call; a corrected body is
// what is sent; two tabs racing on one request: one wins, the other is
// told; new requests appear without a reload; and requests without the
// session, from another Origin or to another Host change nothing.
func TestApprovalPageBrowser(t *testing.T) {
	parallelLong(t, 3)
	browserStarted := browser(t)
	w := newWorld(t, false)
	cs := w.connect()

	// A remote image mailgate's own policy refuses to send: a request
	// written straight into the vault (an older or foreign request). Its
	// server counts fetches: the page must make none.
	var fetched atomic.Int32
	tracker := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { fetched.Add(1) }))
	defer tracker.Close()
	pixel := tracker.URL + "/pixel.png?who=ann"
	foreignHTML := `<p>Our <b>newsletter</b>. <a href="https://example.com/news">Read it online</a>.</p><img src="` + pixel + `" alt="">`
	v, err := approval.Open(filepath.Join(w.home, "vault"), approval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(foreignHTML))
	foreign, err := v.Request(context.Background(), approval.Request{Kind: approval.KindSend, To: "ann@example.org", Subject: "Newsletter with a tracking pixel",
		Body: "Our newsletter. Read it online.", HTMLSHA256: hex.EncodeToString(sum[:]), HTMLFrom: mailmsg.FormatHTML, HTML: foreignHTML}, nil)
	if err != nil {
		t.Fatal(err)
	}

	htmlSend := map[string]any{"to": "alice@example.com", "subject": "Quarterly report", "body_format": "html",
		"body": `<p>Hi Alice,</p><p>the <b>quarterly report</b> is <a href="https://example.com/q3">online</a>.</p>`}
	rejectSend := map[string]any{"to": "bob@example.com", "subject": "Wire transfer", "body": "Bob, please wire 10,000 EUR today.\n"}
	editSend := map[string]any{"to": "carol@example.com", "subject": "Lunch", "body_format": "markdown", "body": "Hi Carol,\n\nlunch on **Friday**?\n"}
	warnSend := map[string]any{"to": "dave@exаmple.com", "subject": "Invoice", "body": "Dave, the invoice.\n%%pay to the new account%%\n"}
	pendingOf := func(tool string, args map[string]any) string {
		t.Helper()
		text, isErr := call(t, cs, tool, args)
		if !isErr || !strings.Contains(text, "Pending_Approval/") {
			t.Fatalf("first %s = %q", tool, text)
		}
		for _, f := range w.files(approval.DirPending) {
			if strings.Contains(text, f) {
				return f
			}
		}
		t.Fatalf("no pending file named in %q", text)
		return ""
	}
	pendingName := func(args map[string]any) string { t.Helper(); return pendingOf("send_email", args) }
	htmlName, rejectName, editName, warnName := pendingName(htmlSend), pendingName(rejectSend), pendingName(editSend), pendingName(warnSend)

	// A reply, sent later, to a message in the inbox, and a forward of it:
	// the page shows the message answered or forwarded, and the time.
	budget := "From: Ann Lee <ann@example.org>\r\nTo: " + userEmail + "\r\nSubject: Budget 2027\r\nDate: Mon, 23 Nov 2026 09:15:00 +0100\r\n" +
		"Message-ID: <b2027@example.org>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=XX\r\n\r\n" +
		"--XX\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nCan we agree on 10k for the offsite? The sheet is attached.\r\n" +
		"--XX\r\nContent-Type: text/csv; name=\"budget.csv\"\r\nContent-Disposition: attachment; filename=\"budget.csv\"\r\n\r\nitem,eur\r\nvenue,6000\r\nfood,4000\r\n--XX--\r\n"
	if _, err := w.gm.Insert([]byte(budget), "INBOX"); err != nil {
		t.Fatal(err)
	}
	found, _ := call(t, cs, "search_email", map[string]any{"query": "subject:Budget"})
	ids := regexp.MustCompile(`Message ID: (\w+) \| Thread ID: (\w+)`).FindStringSubmatch(found)
	if ids == nil {
		t.Fatalf("search found no message: %q", found)
	}
	sendAt := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Minute)
	replyName := pendingOf("reply_email", map[string]any{"thread_id": ids[2], "message_id": ids[1], "body": "Agreed: 10k.\n", "send_at": sendAt.Format(time.RFC3339)})
	forwardName := pendingOf("forward_email", map[string]any{"message_id": ids[1], "to": "finance@example.com", "note": "For the offsite budget."})

	pageURL := startApprovalPage(t, w)
	firstURL := pageURL
	ctx := browserStarted()
	u, _ := url.Parse(pageURL)
	base := "http://" + u.Host
	detail := func(name string) string {
		return base + "/request?" + url.Values{"folder": {approval.DirPending}, "name": {name}}.Encode()
	}

	b := tab{t, ctx}
	// Without the secret: nothing.
	b.do(chromedp.Navigate(base + "/"))
	if locked := b.text("#locked"); !strings.Contains(locked, "Nothing to see here") {
		t.Fatalf("without the secret the page shows %q", locked)
	}

	// With it: the list, newest first.
	b.do(chromedp.Navigate(pageURL), chromedp.WaitVisible(chromedp.CSS("#pending")))
	if loc := b.location(); strings.Contains(loc, "s=") {
		t.Errorf("the secret stays in the address bar: %s", loc)
	}
	list := b.text("#list")
	for _, want := range []string{"Newsletter with a tracking pixel", "Quarterly report", "Wire transfer", "Lunch", "Invoice", "send to dave@exаmple.com"} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}
	if strings.Index(list, "Invoice") > strings.Index(list, "Quarterly report") {
		t.Errorf("the list is not newest first:\n%s", list)
	}
	if !strings.Contains(list, "scheduled "+sendAt.Format("2006-01-02 15:04 UTC")) {
		t.Errorf("the list does not say the reply is scheduled:\n%s", list)
	}
	// The running server's mode, limit and slots left: none used yet.
	slots := regexp.MustCompile(`DEV_MODE=false — an approved email WILL be sent[^;]*\(at most (\d+) per hour\); (\d+) of (\d+) send slots left this hour`)
	status := b.text("#status")
	if m := slots.FindStringSubmatch(status); m == nil || m[1] != m[2] || m[2] != m[3] {
		t.Fatalf("status %q: want the limit and all its slots left", status)
	}
	shot(t, ctx, "list")

	// The scheduled reply: its time on top, the message it answers.
	b.do(chromedp.Navigate(detail(replyName)), chromedp.WaitVisible(chromedp.CSS("#scheduled")))
	if sched := b.text("#scheduled"); !strings.Contains(sched, sendAt.Format("Mon 2 Jan 2006 15:04 UTC")) || !strings.Contains(sched, "not when approved") {
		t.Errorf("scheduled line %q", sched)
	}
	if orig := b.text("#original"); !strings.Contains(orig, "The message this reply answers") || !strings.Contains(orig, "Ann Lee <ann@example.org>") ||
		!strings.Contains(orig, "Mon, 23 Nov 2026 09:15:00 +0100") || !strings.Contains(orig, "Budget 2027") ||
		!strings.Contains(orig, "Can we agree on 10k for the offsite?") || !strings.Contains(orig, "budget.csv") {
		t.Errorf("the message answered: %q", orig)
	}
	shot(t, ctx, "reply")
	// The forward: what is forwarded, its attachment by name and size.
	b.do(chromedp.Navigate(detail(forwardName)), chromedp.WaitVisible(chromedp.CSS("#original")))
	if orig := b.text("#original"); !strings.Contains(orig, "What is forwarded") || !strings.Contains(orig, "Can we agree on 10k") ||
		!strings.Contains(b.text("#original-attachments"), "budget.csv · ") {
		t.Errorf("what is forwarded: %q", orig)
	}

	// The foreign HTML email: shown in the sandboxed frame, the image
	// blocked and listed, never fetched.
	b.do(chromedp.Navigate(detail(foreign.Name)), chromedp.WaitVisible(chromedp.CSS("#html-frame")))
	blocked, blockedList, sandbox := b.text("#blocked"), b.text("#blocked-list"), b.attr("#html-frame", "sandbox")
	if !strings.Contains(blocked, "1 remote resource(s) blocked") || !strings.Contains(blockedList, pixel) || !sandbox.Exists || sandbox.Value != "" {
		t.Fatalf("blocked line %q, list %q, sandbox %+v", blocked, blockedList, sandbox)
	}
	shot(t, ctx, "html")

	// The agent's HTML email: approve it on the page; sent once.
	b.do(chromedp.Navigate(detail(htmlName)), chromedp.WaitVisible(chromedp.CSS("#html-frame")))
	if links := b.text("#links"); !strings.Contains(links, "https://example.com/q3") {
		t.Errorf("links = %q", links)
	}
	b.do(chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("#result")))
	if result := b.text("main"); !strings.Contains(result, "Approved") || !strings.Contains(result, "Approved/"+htmlName) {
		t.Fatalf("approve answered %q", result)
	}
	if text, isErr := call(t, cs, "send_email", htmlSend); isErr || !strings.HasPrefix(text, "Email sent successfully") {
		t.Fatalf("approved send = %q", text)
	}
	call(t, cs, "send_email", htmlSend) // again: never twice
	if sent := w.gm.Sent(); len(sent) != 1 {
		t.Fatalf("sent %d messages, want exactly 1", len(sent))
	}
	if raw, _ := w.gm.RawMessage(w.gm.Sent()[0].Id); !strings.Contains(string(raw), "Subject: Quarterly report") || !strings.Contains(string(raw), "text/html") {
		t.Fatalf("sent message:\n%s", raw)
	}
	// One send taken: the status says one slot fewer.
	b.do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#status")))
	if m := slots.FindStringSubmatch(b.text("#status")); m == nil || atoi(t, m[2]) != atoi(t, m[3])-1 {
		t.Errorf("after one send the status says %q", b.text("#status"))
	}
	if a := readAudit(t, w.home); !strings.Contains(a, `"detail":"approved on the local approval page (mailgate approvals --web)"`) {
		t.Errorf("the audit log does not say the approval came from the page:\n%s", a)
	}

	// Reject with a reason: the agent's next call is told.
	b.do(chromedp.Navigate(detail(rejectName)), chromedp.WaitVisible(chromedp.CSS("#reason")),
		chromedp.SendKeys(chromedp.CSS("#reason"), "Never wire money on request; ask Carol first"), chromedp.Click(chromedp.CSS("#reject")),
		chromedp.WaitVisible(chromedp.CSS("#result")))
	if result := b.text("main"); !strings.Contains(result, "Rejected") {
		t.Fatalf("reject answered %q", result)
	}
	if text, isErr := call(t, cs, "send_email", rejectSend); !isErr || !strings.Contains(text, "The approver's reason: Never wire money on request; ask Carol first") {
		t.Fatalf("after the rejection the agent is told %q", text)
	}

	// Correct the body, approve: the correction is what is sent.
	b.do(chromedp.Navigate(detail(editName)), chromedp.WaitVisible(chromedp.CSS("#body-edit")),
		chromedp.SetValue(chromedp.CSS("#body-edit"), "Hi Carol,\n\nlunch on **Thursday** instead?\n"), chromedp.Click(chromedp.CSS("#approve")),
		chromedp.WaitVisible(chromedp.CSS("#result")))
	if result := b.text("main"); !strings.Contains(result, "Your correction (body) is what is sent") {
		t.Fatalf("approve with a correction answered %q", result)
	}
	if text, isErr := call(t, cs, "send_email", editSend); isErr || !strings.HasPrefix(text, "Email sent successfully") {
		t.Fatalf("corrected send = %q", text)
	}
	sent := w.gm.Sent()
	if len(sent) != 2 {
		t.Fatalf("sent %d, want 2", len(sent))
	}
	if raw, _ := w.gm.RawMessage(sent[1].Id); !strings.Contains(string(raw), "Thursday") || strings.Contains(string(raw), "Friday") {
		t.Fatalf("the corrected body was not what was sent:\n%s", raw)
	}

	// The request with warnings, shown; then two tabs race on it.
	b.do(chromedp.Navigate(detail(warnName)), chromedp.WaitVisible(chromedp.CSS("#warnings")))
	if warns := b.text("#warnings"); !strings.Contains(warns, `looks like "dave@example.com"`) || !strings.Contains(warns, "Obsidian comment") {
		t.Fatalf("warnings shown: %q", warns)
	}
	shot(t, ctx, "warnings")
	ctx2, cancel2 := chromedp.NewContext(ctx)
	defer cancel2()
	b2 := tab{t, ctx2}
	if err := quietTab(ctx2); err != nil {
		t.Fatal(err)
	}
	b2.do(chromedp.Navigate(detail(warnName)), chromedp.WaitVisible(chromedp.CSS("#reject")))
	b.do(chromedp.Click(chromedp.CSS("#approve")), chromedp.WaitVisible(chromedp.CSS("#result")))
	if result := b.text("main"); !strings.Contains(result, "Approved") {
		t.Fatalf("first tab: %q", result)
	}
	// The second tab is told live, and its late click changes nothing.
	b2.do(chromedp.WaitVisible(chromedp.CSS("#gone")), chromedp.Click(chromedp.CSS("#reject")), chromedp.WaitVisible(chromedp.CSS("#result")))
	if result := b2.text("main"); !strings.Contains(result, "someone decided first") || !strings.Contains(result, "Approved/"+warnName) {
		t.Fatalf("second tab: %q", result)
	}
	if got := w.files(approval.DirApproved); len(got) != 1 || got[0] != warnName {
		t.Fatalf("Approved/ = %v", got)
	}

	// Live: a new request appears in the open list without a reload.
	b.do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#list")))
	liveName := pendingName(map[string]any{"to": "erin@example.com", "subject": "Appears by itself", "body": "Hello.\n"})
	b.do(chromedp.WaitVisible(chromedp.CSS(`a[data-name="` + liveName + `"]`)))

	// Without the session, from another Origin, to another Host, without
	// the form token, or with the used secret: nothing changes.
	b.do(chromedp.Navigate(detail(liveName)), chromedp.WaitVisible(chromedp.CSS("#approve")))
	csrf := b.value(`#approve-form input[name="csrf"]`)
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cookies.Cookies) != 1 || csrf == "" {
		t.Fatalf("cookies %v, csrf %q", cookies.Cookies, csrf)
	}
	cookie := &http.Cookie{Name: cookies.Cookies[0].Name, Value: cookies.Cookies[0].Value}
	form := url.Values{"csrf": {csrf}, "folder": {approval.DirPending}, "name": {liveName}}
	for _, tc := range []struct {
		name, origin, host string
		cookie             bool
		form               url.Values
		want               int
	}{
		{"no session", base, "", false, form, http.StatusForbidden},
		{"foreign origin", "http://evil.example", "", true, form, http.StatusForbidden},
		{"no origin", "", "", true, form, http.StatusForbidden},
		{"wrong host (DNS rebinding)", base, "evil.example:" + u.Port(), true, form, http.StatusMisdirectedRequest},
		{"no form token", base, "", true, url.Values{"folder": {approval.DirPending}, "name": {liveName}}, http.StatusForbidden},
	} {
		req, _ := http.NewRequest("POST", base+"/approve", strings.NewReader(tc.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.cookie {
			req.AddCookie(cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	resp, err := http.Get(firstURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the used secret again: status %d", resp.StatusCode)
	}
	if got := w.files(approval.DirPending); !slices.Contains(got, liveName) || len(w.files(approval.DirApproved)) != 1 {
		t.Fatalf("a refused request changed the vault: pending %v", got)
	}
	if n := fetched.Load(); n != 0 {
		t.Fatalf("the page fetched the remote image %d time(s)", n)
	}
}

// tab is one browser tab of a test.
type tab struct {
	t   *testing.T
	ctx context.Context
}

func (b tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatal(err)
	}
}

// get runs a read of the page. The list re-renders itself when the vault
// changes (app.js replaces its inner HTML on a server-sent event, and
// #status is inside it), so a node the query found can be replaced before
// it is read, and Chromium answers "No node with given id found": the read
// runs again, a new query, a few times (seen once in ~8 runs of the test
// on a loaded machine, in b.text).
func get[T any](b tab, a chromedp.Action[T]) T {
	b.t.Helper()
	for try := 1; ; try++ {
		v, err := chromedp.Run(b.ctx, a)
		if err == nil {
			return v
		}
		var cdp *cdproto.Error
		if try < 5 && errors.As(err, &cdp) && strings.Contains(cdp.Message, "No node with given id") {
			b.t.Logf("read again: %v", err)
			continue
		}
		b.t.Fatal(err)
	}
}

func (b tab) text(sel string) string  { b.t.Helper(); return get(b, chromedp.Text(chromedp.CSS(sel))) }
func (b tab) value(sel string) string { b.t.Helper(); return get(b, chromedp.Value(chromedp.CSS(sel))) }
func (b tab) location() string        { b.t.Helper(); return get(b, chromedp.Location()) }
func (b tab) attr(sel, name string) chromedp.AttributeResult {
	b.t.Helper()
	return get(b, chromedp.AttributeValue(chromedp.CSS(sel), name))
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
