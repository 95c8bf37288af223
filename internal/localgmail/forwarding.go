package localgmail

import (
	"net/mail"
	"slices"
	"strings"

	"google.golang.org/api/gmail/v1"
)

// The Gmail methods this file serves, with their quota units (methods.go).
func init() {
	handle("settings.forwardingAddresses.list", 1, (*Server).listForwarding)
	handle("settings.forwardingAddresses.create", 100, (*Server).createForwarding)
	handle("settings.forwardingAddresses.get", 1, (*Server).getForwarding)
	handle("settings.forwardingAddresses.delete", 5, (*Server).deleteForwarding)
}

// users.settings.forwardingAddresses, as Gmail has them: a filter may
// forward only to an address the account lists with verificationStatus
// "accepted" (Gmail sends the owner of a new address a link to click
// first; until then it is "pending"). filters.create refuses any other
// forward target with Gmail's answer to it, 400 failedPrecondition
// "Unrecognized forwarding address", so what passes here passes on a real
// account. Creating and deleting need gmail.settings.sharing, which Google
// grants only to service accounts with domain-wide authority: a user's own
// token can list them, never add one.

// forwardingErr is Gmail's answer to a filter forwarding anywhere else.
func forwardingErr() error {
	return apiErr(400, "failedPrecondition", "Unrecognized forwarding address")
}

// forwardingAccepted reports whether addr is a verified forwarding address
// (s.mu held).
func (s *Server) forwardingAccepted(addr string) bool {
	for _, f := range s.st.cfg.forwarding {
		if strings.EqualFold(f.ForwardingEmail, addr) {
			return f.VerificationStatus == "accepted"
		}
	}
	return false
}

func (s *Server) listForwarding(c *call) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	resp := &gmail.ListForwardingAddressesResponse{}
	for _, f := range s.st.cfg.forwarding {
		cp := *f
		resp.ForwardingAddresses = append(resp.ForwardingAddresses, &cp)
	}
	return resp, nil
}

func (s *Server) getForwarding(c *call) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, f := range s.st.cfg.forwarding {
		if strings.EqualFold(f.ForwardingEmail, c.params["forwardingEmail"]) {
			cp := *f
			return &cp, nil
		}
	}
	return nil, notFound()
}

// createForwarding adds an address, pending its owner's verification.
func (s *Server) createForwarding(c *call) (any, error) {
	var in gmail.ForwardingAddress
	if _, err := c.readBody(&in); err != nil {
		return nil, err
	}
	a, err := mail.ParseAddress(strings.TrimSpace(in.ForwardingEmail))
	if err != nil || a.Name != "" {
		return nil, apiErr(400, "invalidArgument", "Invalid forwarding address")
	}
	if strings.EqualFold(a.Address, s.o.Email) {
		return nil, apiErr(400, "invalidArgument", "Invalid forwarding address")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.st.cfg.forwarding, func(f *gmail.ForwardingAddress) bool { return strings.EqualFold(f.ForwardingEmail, a.Address) }) {
		return nil, apiErr(409, "alreadyExists", "Forwarding address already exists")
	}
	f := &gmail.ForwardingAddress{ForwardingEmail: a.Address, VerificationStatus: "pending"}
	s.st.cfg.forwarding = append(s.st.cfg.forwarding, f)
	cp := *f
	return &cp, nil
}

func (s *Server) deleteForwarding(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.st.cfg.forwarding)
	s.st.cfg.forwarding = slices.DeleteFunc(s.st.cfg.forwarding, func(f *gmail.ForwardingAddress) bool {
		return strings.EqualFold(f.ForwardingEmail, c.params["forwardingEmail"])
	})
	if len(s.st.cfg.forwarding) == n {
		return nil, notFound()
	}
	return nil, nil
}

// AddForwardingAddress lists addr as a forwarding address of the mailbox,
// verified (accepted) or still pending (tests and the sandbox's seed: the
// owner's click on Gmail's link has no API).
func (s *Server) AddForwardingAddress(addr string, accepted bool) {
	status := "pending"
	if accepted {
		status = "accepted"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.st.cfg.forwarding {
		if strings.EqualFold(f.ForwardingEmail, addr) {
			f.VerificationStatus = status
			return
		}
	}
	s.st.cfg.forwarding = append(s.st.cfg.forwarding, &gmail.ForwardingAddress{ForwardingEmail: addr, VerificationStatus: status})
}
