// Package sandbox runs the local Gmail server in-process, seeded with a small
// mailbox, so that a newcomer can use every email tool with no Google account.
// Nothing in the sandbox reaches the internet: mail "sent" there lands in the
// sandbox mailbox's Sent folder.
//
// The mailbox (testdata/mailbox/README.md) has mail for each thing the email
// tools do: Cc and a reply-all thread naming the owner's alias, attachments
// (text, PDF, PNG), HTML with a text alternative, a draft, user labels, and
// Builds: 120 generated notifications, so a search pages.
package sandbox

import (
	"embed"
	"fmt"
	"log/slog"
	"time"

	"github.com/mailgate/mailgate/internal/localgmail"
)

// Email is the sandbox mailbox owner's address.
const Email = "me@sandbox.local"

// Alias is the owner's send-as alias (users.settings.sendAs), among the
// recipients of the reply-all thread "Atlas design review on Thursday".
const Alias = "hello@sandbox.local"

// PendingAlias is a send-as address whose verification Gmail has not
// finished: listed by users.settings.sendAs, refused as from by mailgate.
const PendingAlias = "pending@sandbox.local"

// The sandbox's second account (issue 27 item 2: several accounts), named
// "work" in the email tools' account argument: a mailbox of its own.
const (
	WorkAccount = "work"
	WorkEmail   = "work@sandbox.local"
	WorkAlias   = "team@sandbox.local"
)

// SeedWork loads the work account's small mailbox into srv.
func SeedWork(srv *localgmail.Server) error {
	raw := "From: Dana Client <dana@client.example>\r\nTo: Sandbox Work <" + WorkEmail + ">\r\n" +
		"Subject: Contract for the Atlas project\r\nDate: Mon, 16 Nov 2026 10:00:00 +0000\r\nMessage-ID: <contract@client.example>\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n" +
		"Hello,\r\n\r\nthe contract for Atlas is ready for your signature. Could you confirm by Friday?\r\n\r\nDana\r\n"
	if _, err := srv.Insert([]byte(raw), "INBOX", "UNREAD"); err != nil {
		return fmt.Errorf("seeding the work account's mailbox: %w", err)
	}
	return nil
}

// BuildsQuery matches exactly Builds messages: CI notifications filed under
// the user label "Builds", out of the inbox, dated 1–25 October 2026
// (before the rest of the mailbox, so they never crowd a plain search).
const (
	BuildsQuery = "label:builds"
	Builds      = 120
)

//go:embed testdata/mailbox/*.eml
var mailbox embed.FS

// Start seeds a local Gmail server with the sandbox mailbox and serves it on
// a free loopback port. The caller closes it.
func Start(logger *slog.Logger) (*localgmail.Server, error) {
	srv := localgmail.New(localgmail.Options{Email: Email, Aliases: []string{Alias}, PendingAliases: []string{PendingAlias}, Logger: logger})
	if err := Seed(srv); err != nil {
		return nil, err
	}
	if _, err := srv.Start("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("starting the sandbox mailbox: %w", err)
	}
	return srv, nil
}

// Seed loads the sandbox mailbox into srv: the embedded files, then the
// generated build notifications.
func Seed(srv *localgmail.Server) error {
	if err := srv.SeedFS(mailbox, "testdata/mailbox"); err != nil {
		return fmt.Errorf("seeding the sandbox mailbox: %w", err)
	}
	start := time.Date(2026, 10, 1, 2, 0, 0, 0, time.UTC)
	for i := range Builds {
		n := 4101 + i
		raw := fmt.Sprintf("From: Example CI <ci@example.com>\r\nTo: Sandbox User <%s>\r\n"+
			"Subject: Nightly build #%d passed\r\nDate: %s\r\nMessage-ID: <build-%d@ci.example.com>\r\n"+
			"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n"+
			"Nightly build #%d of main passed in %dm %02ds.\r\n",
			Email, n, start.Add(time.Duration(i)*5*time.Hour).Format(time.RFC1123Z), n, n, 11+i%5, (i*7)%60)
		if _, err := srv.Insert([]byte(raw), "Builds"); err != nil {
			return fmt.Errorf("seeding build %d: %w", n, err)
		}
	}
	return nil
}
