package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Send-as (issue 27 item 3): send, draft, reply and forward take `from`,
// one of the account's send-as addresses as Gmail lists them
// (users.settings.sendAs). Only a verified one is accepted: Gmail would
// send an unverified alias's email from the main address instead, which is
// not what the human approved. The address is bound in the approval
// (approval.Request.From) and shown first in the request.

// sendAs checks from against the account's send-as addresses and returns
// the bare address to bind ("" when from is ""). An address that is not
// one of them, or not verified, is refused before any request is written.
func (h *emailCall) sendAs(ctx context.Context, from string) (string, error) {
	from = strings.TrimSpace(from)
	if from == "" {
		return "", nil
	}
	a, err := mailmsg.ParseAddress(from)
	if err != nil {
		return "", &mailmsg.InvalidError{Field: "from", Value: from, Text: "Invalid from: " + err.Error()}
	}
	list, err := h.gm.SendAsAliases(ctx)
	if err != nil {
		return "", fmt.Errorf("cannot check from %s against your send-as addresses: %w", a.Address, err)
	}
	var verified []string
	for _, s := range list {
		if s.Verified {
			verified = append(verified, s.Email)
		}
	}
	for _, s := range list {
		if !strings.EqualFold(s.Email, a.Address) {
			continue
		}
		if !s.Verified {
			return "", &mailmsg.InvalidError{Field: "from", Value: a.Address, Text: fmt.Sprintf(
				"Invalid from: %s is a send-as address Gmail has not verified yet, and Gmail would send from your main address instead; finish its verification in Gmail's settings (Accounts: Send mail as) or use one of: %s",
				a.Address, strings.Join(verified, ", "))}
		}
		return s.Email, nil
	}
	return "", &mailmsg.InvalidError{Field: "from", Value: a.Address, Text: fmt.Sprintf(
		"Invalid from: %s is not one of this account's send-as addresses; use one of: %s", a.Address, strings.Join(verified, ", "))}
}
