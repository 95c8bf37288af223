package localgmail

import (
	"testing"

	"google.golang.org/api/gmail/v1"
)

// TestFilterForwardsOnlyToAcceptedAddresses: as on Gmail, a filter may
// forward only to a forwarding address the account lists as accepted; an
// unknown or pending one is refused with Gmail's answer, and nothing is
// made. forwardingAddresses lists and gets them in Gmail's shapes; a new
// one waits for its owner (pending), and a second is a conflict.
func TestFilterForwardsOnlyToAcceptedAddresses(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	s.AddForwardingAddress("ok@example.net", true)
	s.AddForwardingAddress("wait@example.net", false)
	filter := func(to string) error {
		_, err := svc.Users.Settings.Filters.Create("me", &gmail.Filter{Criteria: &gmail.FilterCriteria{From: "a@example.org"},
			Action: &gmail.FilterAction{Forward: to}}).Do()
		return err
	}
	for _, to := range []string{"stranger@example.net", "wait@example.net"} {
		wantAPIError(t, filter(to), 400, "failedPrecondition", "Unrecognized forwarding address")
	}
	if n := len(s.Filters()); n != 0 {
		t.Fatalf("%d filters made to unverified addresses", n)
	}
	if err := filter("OK@example.net"); err != nil {
		t.Fatalf("a filter to an accepted address: %v", err)
	}

	list, err := svc.Users.Settings.ForwardingAddresses.List("me").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(list.ForwardingAddresses) != 2 || list.ForwardingAddresses[0].ForwardingEmail != "ok@example.net" ||
		list.ForwardingAddresses[0].VerificationStatus != "accepted" || list.ForwardingAddresses[1].VerificationStatus != "pending" {
		t.Fatalf("list: %+v", list.ForwardingAddresses)
	}
	got, err := svc.Users.Settings.ForwardingAddresses.Get("me", "wait@example.net").Do()
	if err != nil || got.VerificationStatus != "pending" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	_, err = svc.Users.Settings.ForwardingAddresses.Get("me", "stranger@example.net").Do()
	wantAPIError(t, err, 404, "notFound", "")

	made, err := svc.Users.Settings.ForwardingAddresses.Create("me", &gmail.ForwardingAddress{ForwardingEmail: "new@example.net"}).Do()
	if err != nil || made.ForwardingEmail != "new@example.net" || made.VerificationStatus != "pending" {
		t.Fatalf("create: %+v, %v", made, err)
	}
	wantAPIError(t, filter("new@example.net"), 400, "failedPrecondition", "")
	_, err = svc.Users.Settings.ForwardingAddresses.Create("me", &gmail.ForwardingAddress{ForwardingEmail: "new@example.net"}).Do()
	wantAPIError(t, err, 409, "alreadyExists", "")
	if err := svc.Users.Settings.ForwardingAddresses.Delete("me", "new@example.net").Do(); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Users.Settings.ForwardingAddresses.Get("me", "new@example.net").Do()
	wantAPIError(t, err, 404, "notFound", "")
}
