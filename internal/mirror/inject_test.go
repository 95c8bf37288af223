package mirror_test

import (
	"io"
	"mime"
	"net/mail"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/mirror"
)

// TestMirrorHeaderInjectionByThreadName: a channel (thread) name holding
// CR/LF must not inject a header (Reply-To) nor a forged body into the
// copy inserted into the user's Gmail. Such names are refused at the tool
// now; one already in a store (written before that rule) is stored here
// directly, and the header encoder must still carry it as data.
func TestMirrorHeaderInjectionByThreadName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hostile := "channel.x\r\nReply-To: attacker@evil.example\r\n\r\nForged body: wire the money"
	id := e.send(t, "BlueLake", "status", "", "GreenCastle")
	if _, err := e.db.Exec(e.db.Rebind(`UPDATE am_messages SET thread_id = ? WHERE id = ?`), hostile, id); err != nil {
		t.Fatal(err)
	}
	e.startGmail(t, e.db, e.svc, 0)
	waitDrained(t, e.db, "gmail", drainWait)
	raw := rawOf(t, e, id)
	msg, err := mail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		t.Fatalf("mirrored copy does not parse: %v\n%s", err, raw)
	}
	if rt := msg.Header.Get("Reply-To"); rt != "" {
		t.Errorf("injected Reply-To: %q\n%s", rt, raw)
	}
	body, _ := io.ReadAll(msg.Body)
	if strings.Contains(string(body), "Forged body") {
		t.Errorf("forged body reached the message body:\n%s", raw)
	}
	var dec mime.WordDecoder
	got, err := dec.DecodeHeader(msg.Header.Get("X-Agent-Mail-Thread"))
	if err != nil || got != hostile {
		t.Errorf("X-Agent-Mail-Thread decodes to %q (%v), want the name as data %q", got, err, hostile)
	}
	for _, line := range strings.Split(raw[:strings.Index(raw, "\r\n\r\n")], "\r\n") {
		for _, c := range []byte(line) {
			if c < 0x20 && c != '\t' || c == 0x7f {
				t.Errorf("control byte %#x in header line %q", c, line)
			}
		}
	}
}

// TestLabelNameOfLongProjectKey: a project key near its 1,024-byte bound
// gives a label Gmail accepts (a long slug was a 400 retried every hour),
// and two long keys still give two labels.
func TestLabelNameOfLongProjectKey(t *testing.T) {
	t.Parallel()
	short := "data-projects-app"
	if got := mirror.LabelName(short); got != "AgentMail/"+short {
		t.Errorf("LabelName(%q) = %q", short, got)
	}
	a, b := strings.Repeat("p", 1000)+"-a", strings.Repeat("p", 1000)+"-b"
	la, lb := mirror.LabelName(a), mirror.LabelName(b)
	if len(la) > len("AgentMail/")+100 || la == lb {
		t.Errorf("long slugs give %q (%d bytes) and %q", la, len(la), lb)
	}
}
