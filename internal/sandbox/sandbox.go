// Package sandbox runs the local Gmail server in-process, seeded with a small
// mailbox, so that a newcomer can use every email tool with no Google account.
// Nothing in the sandbox reaches the internet: mail "sent" there lands in the
// sandbox mailbox's Sent folder.
package sandbox

import (
	"embed"
	"fmt"
	"log/slog"

	"github.com/mailgate/mailgate/internal/localgmail"
)

// Email is the sandbox mailbox owner's address.
const Email = "me@sandbox.local"

//go:embed testdata/mailbox/*.eml
var mailbox embed.FS

// Start seeds a local Gmail server with the embedded mailbox and serves it on
// a free loopback port. The caller closes it.
func Start(logger *slog.Logger) (*localgmail.Server, error) {
	srv := localgmail.New(localgmail.Options{Email: Email, Logger: logger})
	if err := srv.SeedFS(mailbox, "testdata/mailbox"); err != nil {
		return nil, fmt.Errorf("seeding the sandbox mailbox: %w", err)
	}
	if _, err := srv.Start("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("starting the sandbox mailbox: %w", err)
	}
	return srv, nil
}
