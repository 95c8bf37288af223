package mcpserver

import (
	"context"
	"fmt"
	"strings"
)

// checkForwarding refuses a filter's forward target that Gmail would
// refuse: Gmail forwards only to an address the account lists under
// users.settings.forwardingAddresses with verificationStatus "accepted"
// (added in Gmail's settings and confirmed by the address's owner), and
// mailgate cannot add one (that needs gmail.settings.sharing, which Google
// grants only to domain-wide service accounts). Refused before any request
// is written, so the human is never asked to approve a filter Gmail will
// not make.
func (h *emailCall) checkForwarding(ctx context.Context, addr string) error {
	list, err := h.gm.ForwardingAddresses(ctx)
	if err != nil {
		return fmt.Errorf("reading the account's forwarding addresses: %s", userError(err))
	}
	why := "it is not among them"
	for _, f := range list {
		if strings.EqualFold(f.Email, addr) {
			if f.Accepted {
				return nil
			}
			why = fmt.Sprintf("its verification is %s: its owner has not confirmed it yet", f.Status)
			break
		}
	}
	return invalidField("forward", fmt.Sprintf("%s is not a verified forwarding address of this Gmail account (%s). "+
		"Gmail forwards only to addresses added under Settings → Forwarding and POP/IMAP and confirmed by their owner; "+
		"the user must add it there first. No request was written.", addr, why))
}
