package gmail

import (
	"context"
	"fmt"

	gmailapi "google.golang.org/api/gmail/v1"
)

// ForwardingAddress is one of the account's forwarding addresses
// (users.settings.forwardingAddresses): a filter may forward only to one
// whose owner verified it (Accepted).
type ForwardingAddress struct {
	Email    string
	Status   string // accepted, pending
	Accepted bool
}

// ForwardingAddresses lists the account's forwarding addresses.
func (c *Client) ForwardingAddresses(ctx context.Context) ([]ForwardingAddress, error) {
	list, err := retry(ctx, c, "settings.forwardingAddresses.list", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.ListForwardingAddressesResponse, error) {
		return c.svc.Users.Settings.ForwardingAddresses.List(user).Context(ctx).Do()
	})
	if err != nil {
		return nil, fmt.Errorf("listing forwarding addresses: %w", err)
	}
	return mapped(list.ForwardingAddresses, func(f *gmailapi.ForwardingAddress) ForwardingAddress {
		return ForwardingAddress{Email: f.ForwardingEmail, Status: f.VerificationStatus, Accepted: f.VerificationStatus == "accepted"}
	}), nil
}
