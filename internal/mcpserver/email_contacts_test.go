package mcpserver

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestFindContactRanksAndWarns: find_contact ranks the addresses of the
// newest sent and received headers by recency and frequency, and marks an
// address that looks like a frequent contact without being it.
func TestFindContactRanksAndWarns(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	now := time.Now().UTC()
	n := 0
	add := func(from, to string, ago time.Duration, labels ...string) {
		t.Helper()
		n++
		raw := fmt.Sprintf("From: %s\r\nTo: %s\r\nSubject: m%d\r\nDate: %s\r\nMessage-ID: <m%d@example.com>\r\n\r\nhello\r\n",
			from, to, n, now.Add(-ago).Format(time.RFC1123Z), n)
		if _, err := e.gm.Insert([]byte(raw), labels...); err != nil {
			t.Fatal(err)
		}
	}
	day := 24 * time.Hour
	for i := range 3 {
		add("me@example.com", "Alice Liddell <alice@example.com>", time.Duration(i+1)*day, "SENT")
	}
	add("me@example.com", "Dan <dan@example.org>", 200*day, "SENT")
	add("me@example.com", "Dan <dan@example.org>", 210*day, "SENT")
	add("Erin <erin@example.org>", "me@example.com", 2*day, "INBOX")
	add("Alice Liddell <alice@examp1e.com>", "me@example.com", time.Hour, "INBOX", "UNREAD")

	text, isErr := callTool(t, e.cs, "find_contact", map[string]any{"query": "alice"})
	if isErr {
		t.Fatalf("find_contact: %q", text)
	}
	mustContain(t, "find_contact", text, `Contacts matching "alice"`, "BEGIN UNTRUSTED EMAIL DATA",
		"1. Alice Liddell <alice@example.com> | written to 3, received from 1 | last ",
		"2. Alice Liddell <alice@examp1e.com> | written to 0, received from 1 | last ",
		`WARNING: "alice@examp1e.com" looks like "alice@example.com", one of the user's frequent contacts, but is a different address`,
		"1 of these look like a frequent contact without being it")
	if strings.Count(text, "WARNING:") != 1 {
		t.Fatalf("one warning expected:\n%s", text)
	}
	// Recency counts: two emails to Dan half a year ago rank below one
	// received from Erin two days ago; the user's own address is no contact.
	text, _ = callTool(t, e.cs, "find_contact", map[string]any{})
	erin, dan := strings.Index(text, "<erin@example.org>"), strings.Index(text, "<dan@example.org>")
	if erin < 0 || dan < 0 || erin > dan || strings.Contains(text, "<me@example.com>") || !strings.Contains(text, "1. Alice Liddell <alice@example.com>") {
		t.Fatalf("ranking:\n%s", text)
	}
	if text, isErr := callTool(t, e.cs, "find_contact", map[string]any{"query": "nobody-here"}); isErr || !strings.HasPrefix(text, "No contact matching") {
		t.Fatalf("no match: (isError=%v) %q", isErr, text)
	}
}

// TestFindContactCountsCcOfSentMail: an address the user copied on a sent
// email, openly or blind, was written to, as one in To was (the Sent copy
// keeps its Bcc header, as Gmail's does).
func TestFindContactCountsCcOfSentMail(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	raw := fmt.Sprintf("From: me@example.com\r\nTo: Zed <zed@example.net>\r\nCc: Quinn Ortega <quinn@example.net>, yara@example.net\r\nBcc: Wren Blake <wren@example.net>\r\n"+
		"Subject: plans\r\nDate: %s\r\nMessage-ID: <cc1@example.com>\r\n\r\nhello\r\n", time.Now().UTC().Format(time.RFC1123Z))
	if _, err := e.gm.Insert([]byte(raw), "SENT"); err != nil {
		t.Fatal(err)
	}
	text, isErr := callTool(t, e.cs, "find_contact", map[string]any{})
	if isErr {
		t.Fatalf("find_contact: %q", text)
	}
	mustContain(t, "find_contact", text, "Zed <zed@example.net> | written to 1, received from 0",
		"Quinn Ortega <quinn@example.net> | written to 1, received from 0", "<yara@example.net> | written to 1, received from 0",
		"Wren Blake <wren@example.net> | written to 1, received from 0")
}
