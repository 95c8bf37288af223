package approval

import (
	"strings"
	"testing"
	"time"
)

// fuzzMatch runs the matching rules (no filesystem, no ledger) for req
// against an already-parsed file at t0.
func fuzzMatch(p *parsedFile, req Request, mode Mode) string {
	m := matcher{
		v:    &Vault{o: Options{Mode: mode, TTL: 24 * time.Hour, MaxFileSize: 1 << 20}},
		req:  req,
		sha:  req.SHA256(),
		addr: strings.ToLower(req.Address()),
		now:  t0,
	}
	_, reason := m.check(p, t0)
	return reason
}

// FuzzParseApproval feeds arbitrary bytes to the approval parser. It must
// never panic, and whenever a file is accepted in content mode for the
// reference send or reply, the file must really carry that request's
// subject, recipient or thread, and body — checked on the raw bytes, not
// through the parser.
func FuzzParseApproval(f *testing.F) {
	send, reply := sendReq(), replyReq()
	for _, req := range []Request{send, reply} {
		good := string(renderRequest(req, req.SHA256(), "id-1", t0, t0.Add(time.Hour), ""))
		f.Add([]byte(good))
		f.Add([]byte(strings.ReplaceAll(good, "\n", "\r\n")))
		f.Add([]byte("\ufeff" + good))
		f.Add([]byte(strings.Replace(good, "status: pending", "status: approved\nstatus: rejected", 1)))
		f.Add([]byte(strings.Replace(good, "Meeting notes", "Meeting  notes", 1)))
	}
	f.Add([]byte("---\ntype: email_send\nstatus: approved\nto: John <john@example.com>\n---\n"))
	f.Add([]byte("---\nto: &a john@example.com\nsubject: *a\n---\n"))
	f.Add([]byte("---\n{type: email_send, to: [a@b.c, d@e.f]}\n---\n"))
	f.Add([]byte("---\nsubject: |\n  ---\n  x\n---\nbody"))
	f.Add([]byte("+++\ntype = \"email_send\"\n+++\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseApproval(data)
		if err != nil {
			return
		}
		for _, req := range []Request{send, reply} {
			_ = fuzzMatch(p, req, ModeRecipient)
			if fuzzMatch(p, req, ModeContent) != "" {
				continue
			}
			raw := normalizeNewlines(strings.TrimPrefix(string(data), "\ufeff"))
			body := normalizeNewlines(req.Body)
			if !strings.HasSuffix(raw, body) {
				t.Fatalf("accepted file does not end with the body:\n%q", data)
			}
			// What precedes the body must end with the closing delimiter
			// line, optionally followed by the one blank separator line.
			head := strings.TrimSuffix(raw, body)
			// In a FormatV2 file the notes come first: the body follows the
			// first BodyMarker line and one blank line.
			v2 := strings.TrimSpace(p.Format) == FormatV2 && (strings.HasSuffix(head, "\n"+BodyMarker+"\n\n") || strings.HasSuffix(head, "\n"+BodyMarker+"\n")) &&
				strings.Index(head, "\n"+BodyMarker+"\n") == strings.LastIndex(head, "\n"+BodyMarker+"\n")
			if !v2 && !closesFrontmatter(head) && !(strings.HasSuffix(head, "\n") && closesFrontmatter(head[:len(head)-1])) {
				t.Fatalf("accepted body is not the whole text after the frontmatter:\n%q", data)
			}
			if p.Subject != req.Subject || Kind(strings.ToLower(strings.TrimSpace(p.Type))) != req.Kind {
				t.Fatalf("accepted with subject %q type %q", p.Subject, p.Type)
			}
			if req.Kind == KindSend {
				if a, err := parseSingleAddress(p.To.one()); err != nil || !strings.EqualFold(a, req.Address()) {
					t.Fatalf("accepted with to %q", p.To)
				}
			} else if strings.TrimSpace(p.ThreadID) != req.ThreadID {
				t.Fatalf("accepted with thread %q", p.ThreadID)
			}
			for _, key := range []string{"subject", "to", "type", "status", "thread_id"} {
				if n := strings.Count("\n"+head, "\n"+key+":"); n > 1 {
					t.Fatalf("accepted with %d %s keys", n, key)
				}
			}
		}
	})
}

// FuzzRequestRoundTrip: every valid request renders to a request file that
// parses back to exactly the same request and matches it in content mode.
func FuzzRequestRoundTrip(f *testing.F) {
	f.Add("John <john@example.com>", "Meeting notes", "Hi\r\nthere\n", false)
	f.Add("a@b.c", "\"quoted\" \\ back # hash: colon", "", false)
	f.Add("ann@example.org", "Re: 🚀 \u2028", "<!-- hidden -->\n", true)
	f.Fuzz(func(t *testing.T, to, subject, body string, reply bool) {
		req := Request{Kind: KindSend, To: to, Subject: subject, Body: body}
		if reply {
			req = Request{Kind: KindReply, ThreadID: "t1", MessageID: "m1", To: to, Subject: subject, Body: body}
		}
		if req.Validate() != nil {
			return
		}
		p, data := renderedMatches(t, req)
		if p.Subject != subject || p.Body != normalizeNewlines(body) || p.ContentSHA256 != req.SHA256() {
			t.Fatalf("round trip changed fields:\n%q", data)
		}
	})
}

// renderedMatches renders req's request file, which must parse back and
// match req in content mode; it returns the parsed file and its bytes.
func renderedMatches(t *testing.T, req Request) (*parsedFile, []byte) {
	t.Helper()
	data := renderRequest(req, req.SHA256(), "id-1", t0, t0.Add(time.Hour), "note")
	p, err := parseApproval(data)
	if err != nil {
		t.Fatalf("rendered request does not parse: %v\n%q", err, data)
	}
	if r := bindingChange(p, req); r != "" {
		t.Fatalf("rendered request does not bind itself: %s\n%q", r, data)
	}
	if r := fuzzMatch(p, req, ModeContent); r != "" {
		t.Fatalf("rendered request does not match itself: %s\n%q", r, data)
	}
	return p, data
}

// closesFrontmatter reports whether s ends with a "---" line and its LF.
func closesFrontmatter(s string) bool {
	if !strings.HasSuffix(s, "\n") {
		return false
	}
	s = s[:len(s)-1]
	return strings.TrimSpace(s[strings.LastIndex(s, "\n")+1:]) == "---"
}

// FuzzAccountRoundTrip: a request's account, whatever the agent named,
// is either refused or written into the request file, read back as it
// was, and bound.
func FuzzAccountRoundTrip(f *testing.F) {
	for _, s := range []string{"work", "default", "", "../x", "a\"b", "w\nx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, acct string) {
		req := Request{Kind: KindSend, To: "a@example.com", Subject: "s", Body: "b", Account: acct}
		if req.Validate() != nil {
			return
		}
		p, data := renderedMatches(t, req)
		if p.Account != acct {
			t.Fatalf("account %q read back as %q:\n%q", acct, p.Account, data)
		}
	})
}
