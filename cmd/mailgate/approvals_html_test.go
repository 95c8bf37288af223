package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
)

// TestApprovalsShowDescribesHTMLPart: `mailgate approvals show` says where
// the HTML part came from and lists its links, the misleading one flagged
// (issue 32 item 2).
func TestApprovalsShowDescribesHTMLPart(t *testing.T) {
	parallel(t)
	it := &approval.Item{Folder: approval.DirPending, Name: "r.md", Path: "/v/r.md", Kind: approval.KindSend,
		To: "alice@example.com", Subject: "Invoice", Body: "Log in", HTMLSHA256: strings.Repeat("a", 64), HTMLFrom: "html",
		HTMLLinks: []string{`https://attacker.example/login (text "https://bank.example/login") MISLEADING: the text shows another address than the link goes to`}}
	var b bytes.Buffer
	printRequest(&b, it, time.Now())
	for _, want := range []string{
		"HTML     An HTML part goes too, written in HTML by the agent: the text below is that HTML converted to text for reading",
		"         Links in the HTML part (1; no images: mailgate never sends them):\n",
		"         - https://attacker.example/login (text \"https://bank.example/login\") MISLEADING",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("approvals show lacks %q:\n%s", want, b.String())
		}
	}
}
