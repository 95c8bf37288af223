package mcpserver

import (
	"context"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// SentLookup finds a sent email by the Message-ID mailgate fixed for it,
// and, where Gmail replaced that Message-ID (as it may for API sends), by
// recipient, subject and time; an email never sent is not found.
func TestSentLookupFindsEmailEvenWhenGmailRewritesMessageID(t *testing.T) {
	t.Parallel()
	for _, rewrite := range []bool{false, true} {
		gm := localgmail.New(localgmail.Options{Email: "me@example.com", RewriteMessageID: rewrite})
		if _, err := gm.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gm.Close() })
		ctx := context.Background()
		c, err := gmail.New(ctx, gmail.Options{Endpoint: gm.URL(), TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t"})})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now().Add(-time.Minute)
		raw, err := mailmsg.Build(mailmsg.Outgoing{To: bare([]string{"bob@example.com"})[0], Subject: "Plans for Friday", Body: "Hi.\n",
			MessageID: "<0123abcd-89abcdef@mailgate.local>"})
		if err != nil {
			t.Fatal(err)
		}
		sent, err := c.Send(ctx, raw, "")
		if err != nil {
			t.Fatal(err)
		}
		look := SentLookup(GmailOf(c))
		got, found, err := look(ctx, gate.SentQuery{MessageID: "<0123abcd-89abcdef@mailgate.local>", To: "bob@example.com", Subject: "Plans for Friday", After: start})
		if err != nil || !found || got.MessageID != sent.ID {
			t.Errorf("rewrite=%t: lookup of the sent email = %+v, %t, %v; want %s", rewrite, got, found, err, sent.ID)
		}
		_, found, err = look(ctx, gate.SentQuery{MessageID: "<0123abcd-00000000@mailgate.local>", To: "bob@example.com", Subject: "Plans for Saturday", After: start})
		if err != nil || found {
			t.Errorf("rewrite=%t: an email never sent was found (%v)", rewrite, err)
		}
	}
}
