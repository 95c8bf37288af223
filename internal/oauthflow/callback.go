package oauthflow

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
)

// callback is the loopback listener's handler. Only a request carrying an
// authorization response (code or error) counts; anything else a browser
// asks for (a favicon) gets 404. The page shown says how the sign-in ended,
// so the user knows whether to look at the terminal.
type callback struct {
	ctx     context.Context
	answers chan<- answer
}

func (c *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.URL.Path != "/" || (!q.Has("code") && !q.Has("error")) {
		http.NotFound(w, r)
		return
	}
	done := make(chan error, 1)
	select {
	case c.answers <- answer{query: q, done: done}:
	case <-c.ctx.Done():
		page(w, http.StatusGone, "mailgate is no longer waiting for this sign-in", "Run mailgate auth again.")
		return
	case <-r.Context().Done():
		return
	}
	var err error
	select {
	case err = <-done:
	case <-r.Context().Done():
		return
	}
	if err != nil {
		page(w, http.StatusBadRequest, "mailgate sign-in failed", err.Error())
		return
	}
	page(w, http.StatusOK, "mailgate is signed in", "You can close this tab and go back to the terminal.")
}

func page(w http.ResponseWriter, status int, title, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>%s</title></head><body><h1>%s</h1><p>%s</p></body></html>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(msg))
}

// readPaste reads lines until one holds an authorization response. It may
// block in Read after the flow ends; the process exits soon after, and
// tests close their pipe.
func readPaste(ctx context.Context, r io.Reader, answers chan<- answer, log io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		a, ok := parsePasted(line)
		if !ok {
			fmt.Fprintln(log, "That is not the address the browser was sent to (it has code= in it); paste the whole address and press Enter.")
			continue
		}
		select {
		case answers <- a:
			return
		case <-ctx.Done():
			return
		}
	}
}

// parsePasted reads what a user pasted: the whole redirect address, its
// query string, or the bare code. A bare code has no state to check; PKCE
// still makes a code from any other sign-in useless.
func parsePasted(s string) (answer, bool) {
	s = strings.Trim(strings.TrimSpace(s), `"'<>`)
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[i+1:]
	}
	if strings.Contains(s, "=") {
		q, err := url.ParseQuery(strings.TrimPrefix(s, "&"))
		if err != nil || (q.Get("code") == "" && q.Get("error") == "") {
			return answer{}, false
		}
		return answer{query: q}, true
	}
	// Google's codes look like 4/0AX4Xf…; a copy may keep the %2F.
	if u, err := url.QueryUnescape(s); err == nil {
		s = u
	}
	if s == "" || strings.ContainsAny(s, " \t:") {
		return answer{}, false
	}
	return answer{query: url.Values{"code": {s}}, bare: true}, true
}

// SystemBrowser returns a function that opens a URL in the desktop's
// browser (open on macOS, rundll32 on Windows, xdg-open elsewhere), or nil
// when there is none to use. On Linux and the BSDs a display is required:
// without one xdg-open may start a text browser inside the very terminal the
// user needs for pasting. The browser is started, never waited for; its
// output is discarded.
func SystemBrowser(goos string, getenv func(string) string) func(string) error {
	var name string
	var args []string
	switch goos {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	default:
		if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
			return nil
		}
		name = "xdg-open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return nil
	}
	return func(u string) error {
		cmd := exec.Command(path, append(args[:len(args):len(args)], u)...)
		if err := cmd.Start(); err != nil {
			return err
		}
		go cmd.Wait()
		return nil
	}
}
