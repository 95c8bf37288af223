package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/warnings"
)

// get_vacation and set_vacation (issue 27). Reading the vacation
// responder is free. Setting it, changing it or turning it off is gated:
// an enabled responder sends mail to everyone who writes, on the user's
// behalf. The request shows, and the approval binds (hashed), the whole
// setting: on or off, the subject, the text, the period and who it
// answers; a call with any other text is another request, and an approval
// whose text the human edited is refused (the agent's call must carry the
// text that is set). It takes no slot of the send limit: Gmail, not
// mailgate, sends the answers, and each setting is one approval.

type emailGetVacationIn struct{ accountArg }

type emailSetVacationIn struct {
	accountArg
	Enabled      bool   `json:"enabled" jsonschema:"true to turn the responder on with this text, false to turn it off"`
	Subject      string `json:"subject,omitempty" jsonschema:"Subject of the automatic answer (Gmail prefixes the original subject when empty)"`
	Text         string `json:"text,omitempty" jsonschema:"Plain-text body of the automatic answer (required to turn it on)"`
	Start        string `json:"start,omitempty" jsonschema:"When it starts answering: RFC 3339 time or YYYY-MM-DD (UTC midnight); omit for now"`
	End          string `json:"end,omitempty" jsonschema:"When it stops answering: RFC 3339 time or YYYY-MM-DD (UTC midnight); omit to answer until turned off"`
	ContactsOnly bool   `json:"contacts_only,omitempty" jsonschema:"Answer only the user's contacts"`
	DomainOnly   bool   `json:"domain_only,omitempty" jsonschema:"Answer only people in the user's domain (Google Workspace)"`
}

// maxVacationText bounds the responder's text (Gmail publishes no limit;
// an automatic answer longer than this is a mistake).
const maxVacationText = 20_000

func (h *emailHandlers) getVacation(ctx context.Context, _ *mcp.CallToolRequest, _ emailGetVacationIn) (*mcp.CallToolResult, any, error) {
	return h.reading(ctx, "get_vacation", approval.TargetVacation, func(ctx context.Context, h *emailCall) *mcp.CallToolResult {
		v, err := h.gm.GetVacation(ctx)
		if err != nil {
			return errorResult("Error reading the vacation responder: " + userError(err))
		}
		return textResult(describeVacation(v))
	})
}

// describeVacation is the responder in words: the request's description
// (what the approval binds) and get_vacation's answer.
func describeVacation(v gmail.Vacation) string {
	var b strings.Builder
	if !v.Enabled {
		b.WriteString("Vacation responder: OFF (nobody is answered automatically).\n")
		if v.Subject == "" && v.Text == "" {
			return b.String()
		}
		b.WriteString("Its stored text, unused while it is off:\n")
	} else {
		b.WriteString("Vacation responder: ON: Gmail answers senders automatically (at most once every 4 days per sender).\n")
	}
	who := "everyone who writes"
	switch {
	case v.RestrictToContacts && v.RestrictToDomain:
		who = "only the user's contacts in the user's domain"
	case v.RestrictToContacts:
		who = "only the user's contacts"
	case v.RestrictToDomain:
		who = "only people in the user's domain"
	}
	fmt.Fprintf(&b, "Answers: %s\n", who)
	start, end := "now (no start time)", "until turned off (no end time)"
	if !v.Start.IsZero() {
		start = v.Start.UTC().Format(time.RFC3339)
	}
	if !v.End.IsZero() {
		end = v.End.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(&b, "From: %s\nUntil: %s\n", start, end)
	fmt.Fprintf(&b, "Subject: %s\n", valueOr(warnings.Escape(v.Subject), "(none: Gmail uses \"Re: \" and the sender's subject)"))
	b.WriteString("Text:\n")
	b.WriteString(strings.TrimRight(v.Text, "\n"))
	b.WriteString("\n")
	if v.HTML != "" {
		b.WriteString("(An HTML version is stored too and will be replaced by this text.)\n")
	}
	return b.String()
}

// vacationTime reads an RFC 3339 time or a date (UTC midnight).
func vacationTime(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC().Truncate(time.Millisecond), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, invalidField(field, field+" is an RFC 3339 time (2026-12-01T09:00:00Z) or a date (2026-12-01)")
}

func (h *emailHandlers) setVacation(ctx context.Context, _ *mcp.CallToolRequest, in emailSetVacationIn) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, "set_vacation", approval.TargetVacation, func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		v := gmail.Vacation{Enabled: in.Enabled, Subject: strings.TrimSpace(in.Subject), Text: strings.ReplaceAll(in.Text, "\r\n", "\n"),
			RestrictToContacts: in.ContactsOnly, RestrictToDomain: in.DomainOnly}
		var err error
		if v.Start, err = vacationTime("start", in.Start); err != nil {
			return invalid(err)
		}
		if v.End, err = vacationTime("end", in.End); err != nil {
			return invalid(err)
		}
		switch {
		case !v.Start.IsZero() && !v.End.IsZero() && !v.End.After(v.Start):
			return invalid(invalidField("end", "end must be after start"))
		case v.Enabled && strings.TrimSpace(v.Text) == "":
			return invalid(invalidField("text", "text is required to turn the responder on"))
		case len(v.Text) > maxVacationText || !utf8.ValidString(v.Text):
			return invalid(invalidField("text", fmt.Sprintf("text must be valid UTF-8 of at most %d bytes", maxVacationText)))
		}
		if err := mailmsg.CheckHeaderValue("subject", v.Subject); err != nil {
			return invalid(invalidField("subject", err.Error()))
		}
		var ws []warnings.Warning
		if v.Enabled {
			ws = append(ws, warnings.Warning{Code: "vacation", Text: "An enabled responder sends an email, on the user's behalf, to every sender it answers (" +
				strings.TrimPrefix(strings.SplitN(describeVacation(v), "\n", 3)[1], "Answers: ") + ")."})
			ws = append(ws, warnings.Body(v.Text)...)
		}
		subject := "turn the vacation responder off"
		if v.Enabled {
			subject = "turn the vacation responder on"
			if !v.End.IsZero() {
				subject += " until " + v.End.Format(time.RFC3339)
			}
		}
		req := approval.Request{Account: h.reqAccount, Kind: approval.KindVacation, Target: approval.TargetVacation, Subject: subject, Body: describeVacation(v)}
		return h.gatedSettings(ctx, "set_vacation", req, ws, func(ctx context.Context) (gate.SendResult, error) {
			_, err := h.gm.UpdateVacation(ctx, v)
			return gate.SendResult{}, err
		})
	})
}
