package approvalweb

import (
	"errors"
	"fmt"
	"time"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/warnings"
)

// What a reply or a forward is judged by besides itself: the message it
// answers or forwards, as kept beside the request when it was written
// (approval.Vault.Original: the page needs no Gmail); and, for an email
// sent later, its time.

// original is the kept message as the page shows it: every field the
// sender's, escaped (hidden characters made visible), shown as text.
type original struct {
	Heading                     string
	From, Date, Subject, To, Cc string
	Text                        string
	Truncated                   bool
	Attachments                 []string // "name · size"
	Missing                     string   // why it is not shown
}

func (s *Server) original(it *approval.Item) *original {
	o := &original{Heading: "The message this reply answers"}
	switch it.Kind {
	case approval.KindReply:
	case approval.KindForward:
		o.Heading = "What is forwarded: the original message"
	default:
		return nil
	}
	kept, err := s.o.Vault.Original(it)
	switch {
	case errors.Is(err, approval.ErrNoOriginal) && it.OriginalSHA256 == "":
		o.Missing = fmt.Sprintf("Message %s was not kept with this request (written before mailgate kept it, or unreadable then): read it in Gmail before approving.", it.MessageID)
		return o
	case err != nil:
		o.Missing = "The kept copy of message " + it.MessageID + " cannot be shown: " + err.Error() + ". Read it in Gmail before approving."
		return o
	}
	o.From, o.Date, o.Subject = warnings.Escape(kept.From), warnings.Escape(kept.Date), warnings.Escape(kept.Subject)
	o.To, o.Cc = warnings.Escape(kept.To), warnings.Escape(kept.Cc)
	o.Text, o.Truncated = warnings.Escape(kept.Text), kept.Truncated
	for _, a := range kept.Attachments {
		size := "size unknown"
		if a.Size >= 0 {
			size = mailmsg.FormatSize(a.Size)
		}
		o.Attachments = append(o.Attachments, warnings.Escape(a.Name)+" · "+size)
	}
	return o
}

// schedule is when an email with a send time goes: in UTC (as the request
// binds it) and in the page's local time.
type schedule struct {
	UTC, Local string
	Past       bool // the time passed already
}

func scheduleOf(at, now time.Time) *schedule {
	if at.IsZero() {
		return nil
	}
	return &schedule{UTC: at.UTC().Format("Mon 2 Jan 2006 15:04 MST"), Local: at.Local().Format("Mon 2 Jan 2006 15:04 MST (-07:00)"), Past: !at.After(now)}
}
