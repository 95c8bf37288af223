package oauthflow

import "slices"

// Which granted scope allows what another would. Google documents every
// Gmail method with the scopes that permit it: gmail.modify permits all but
// permanent deletion (so everything mailgate does), https://mail.google.com/
// everything, and gmail.compose sending as well as drafts. A token granted
// gmail.modify therefore needs no gmail.readonly beside it; one granted
// gmail.compose needs no gmail.send. Covers is what auth and doctor use to
// say whether a token is enough, so a broader grant is never reported as
// missing a narrower scope.

const (
	scopeFull    = "https://mail.google.com/"
	scopeModify  = scopePrefix + "gmail.modify"
	scopeCompose = scopePrefix + "gmail.compose"
	scopeSend    = scopePrefix + "gmail.send"
	scopeMeta    = scopePrefix + "gmail.metadata"
	// scopeSettings permits creating and deleting filters and setting the
	// vacation responder: Google's discovery document lists it alone for
	// those methods, so neither gmail.modify nor the full scope stands in.
	scopeSettings = scopePrefix + "gmail.settings.basic"
)

// Covers reports whether the granted scopes (full URLs) permit what want
// permits.
func Covers(granted []string, want string) bool {
	switch {
	case slices.Contains(granted, want):
		return true
	case want == scopeSettings:
		return false
	case slices.Contains(granted, scopeFull):
		return true
	case want == scopeFull || want == scopeMeta:
		return false // nothing narrower stands in for them
	case slices.Contains(granted, scopeModify):
		return true
	case want == scopeSend:
		return slices.Contains(granted, scopeCompose)
	}
	return false
}

// Missing returns the scopes of want that granted does not cover, in want's
// order.
func Missing(granted, want []string) []string {
	var out []string
	for _, w := range want {
		if !Covers(granted, w) {
			out = append(out, w)
		}
	}
	return out
}
