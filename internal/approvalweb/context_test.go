package approvalweb

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
)

// TestPageShowsOriginalAndSchedule: a scheduled reply shows its time
// (UTC and local) at the top and in the list, and the message it answers
// as kept beside the request, the sender's text escaped; a reply written
// without a kept original says to read it in Gmail.
func TestPageShowsOriginalAndSchedule(t *testing.T) {
	t.Parallel()
	v, s, _, c := page(t)
	at := time.Date(2030, 12, 1, 8, 30, 0, 0, time.UTC)
	req := approval.Request{Kind: approval.KindReply, ThreadID: "18d5a3b2c1d0e0f1", MessageID: "18d5a3b2c1d0e0f2", To: "ann@example.org",
		Subject: "Re: Budget", Body: "Agreed.\n", SendAt: at,
		Original: &approval.Original{MessageID: "18d5a3b2c1d0e0f2", From: "Ann <ann@example.org>", Date: "Mon, 9 Feb 2026 09:00:00 +0100", Subject: "Budget",
			Text: "Can we agree on 10k?<script>alert(1)</script>\u202e", Attachments: []approval.OriginalFile{{Name: "budget.xlsx", Size: 2048}}}}
	p, err := v.Request(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, c, s.origin+"/request?"+url.Values{"folder": {approval.DirPending}, "name": {p.Name}}.Encode())
	for _, want := range []string{
		`id="scheduled"`, "Sun 1 Dec 2030 08:30 UTC", at.Local().Format("Mon 2 Jan 2006 15:04 MST"), "not when approved",
		"The message this reply answers", "Ann &lt;ann@example.org&gt;", "Mon, 9 Feb 2026 09:00:00 &#43;0100", "It is not sent.",
		"Can we agree on 10k?&lt;script&gt;alert(1)&lt;/script&gt;⟨U&#43;202E RIGHT-TO-LEFT OVERRIDE⟩", "budget.xlsx · 2 KB",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	_, list := get(t, c, s.origin+"/")
	if !strings.Contains(list, "scheduled 2030-12-01 08:30 UTC") {
		t.Errorf("the list does not say it is scheduled:\n%s", list)
	}

	req.Original, req.SendAt, req.Body = nil, time.Time{}, "Another.\n"
	p, err = v.Request(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, body = get(t, c, s.origin+"/request?"+url.Values{"folder": {approval.DirPending}, "name": {p.Name}}.Encode())
	if !strings.Contains(body, "Message 18d5a3b2c1d0e0f2 was not kept with this request") || strings.Contains(body, `id="scheduled"`) {
		t.Errorf("a reply without a kept original:\n%s", body)
	}
}

// TestPageNamesTheAccount: a request of another account than the default
// names it first, in the list and in From.
func TestPageNamesTheAccount(t *testing.T) {
	t.Parallel()
	v, s, _, c := page(t)
	p, err := v.Request(context.Background(), approval.Request{Kind: approval.KindSend, Account: "work", To: "ann@example.org", Subject: "Hi", Body: "Hello.\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, c, s.origin+"/request?"+url.Values{"folder": {approval.DirPending}, "name": {p.Name}}.Encode())
	if !strings.Contains(body, "<th>From</th><td>the Gmail account “work” (its own address)</td>") {
		t.Errorf("From does not name the account:\n%s", body)
	}
	if _, list := get(t, c, s.origin+"/"); !strings.Contains(list, `<span class="tag acct">account work</span> <span class="what">send to ann@example.org</span>`) {
		t.Errorf("the list does not name the account:\n%s", list)
	}
}
