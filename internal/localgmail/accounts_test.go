package localgmail

import (
	"context"
	"encoding/base64"
	"testing"

	"golang.org/x/oauth2"
	"google.golang.org/api/gmail/v1"

	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
)

// TestAccountsBehindOneAddress: two accounts behind one address, as Gmail
// serves them: the token decides the mailbox (users/me is the token's
// account, another account's address is refused), each has its own
// messages and send-as addresses, a send reaches the sender's Sent only,
// and each account's refresh token is honoured by its own server.
func TestAccountsBehindOneAddress(t *testing.T) {
	t.Parallel()
	a := New(Options{Email: "ann@home.example", RequireAuth: true, Now: fixedClock})
	b := New(Options{Email: "ann@work.example", RequireAuth: true, Now: fixedClock, Aliases: []string{"team@work.example"}})
	front := NewAccounts(a, b)
	base, _ := gmailschema.Serve(t, front)
	front.SetBaseURL(base)
	for _, s := range []*Server{a, b} {
		s.AddClient("cid", "csecret")
	}
	mustInsert(t, a, msg("x@example.com", "ann@home.example", "Home news", "home"), "INBOX")
	mustInsert(t, b, msg("y@example.com", "ann@work.example", "Work news", "work"), "INBOX")
	ctx := context.Background()
	rtB := b.IssueRefreshToken("cid", "gmail.modify")
	svcA := tokenService(t, base, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: a.IssueAccessToken("cid", "gmail.modify")}))
	svcB := tokenService(t, base, oauthConfig(b).TokenSource(ctx, &oauth2.Token{RefreshToken: rtB}))

	for _, c := range []struct {
		svc          *gmail.Service
		email, other string
		subject      string
	}{{svcA, "ann@home.example", "ann@work.example", "Home news"}, {svcB, "ann@work.example", "ann@home.example", "Work news"}} {
		p, err := c.svc.Users.GetProfile("me").Do()
		if err != nil || p.EmailAddress != c.email {
			t.Fatalf("users/me of %s's token: %+v, %v", c.email, p, err)
		}
		l, err := c.svc.Users.Messages.List("me").Do()
		if err != nil || len(l.Messages) != 1 {
			t.Fatalf("%s lists %+v, %v: want its one message", c.email, l, err)
		}
		m, err := c.svc.Users.Messages.Get("me", l.Messages[0].Id).Format("metadata").Do()
		if err != nil {
			t.Fatal(err)
		}
		subject := ""
		for _, h := range m.Payload.Headers {
			if h.Name == "Subject" {
				subject = h.Value
			}
		}
		if subject != c.subject {
			t.Fatalf("%s reads %q, want its own %q", c.email, subject, c.subject)
		}
		_, err = c.svc.Users.GetProfile(c.other).Do()
		wantAPIError(t, err, 403, "forbidden", "Delegation denied for "+c.email)
	}
	if b.TokenRequests() != 1 || a.TokenRequests() != 0 {
		t.Fatalf("token requests: home %d, work %d; want work's refresh answered by work", a.TokenRequests(), b.TokenRequests())
	}
	as, err := svcB.Users.Settings.SendAs.List("me").Do()
	if err != nil || len(as.SendAs) != 2 {
		t.Fatalf("work's send-as: %+v, %v", as, err)
	}
	raw := base64.URLEncoding.EncodeToString(msg("team@work.example", "z@example.com", "Hello", "from work"))
	if _, err := svcB.Users.Messages.Send("me", &gmail.Message{Raw: raw}).Do(); err != nil {
		t.Fatal(err)
	}
	if len(a.Sent()) != 0 || len(b.Sent()) != 1 {
		t.Fatalf("sent: home %d, work %d; want 0 and 1", len(a.Sent()), len(b.Sent()))
	}
}
