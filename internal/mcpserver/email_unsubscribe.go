package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/fence"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/unsubscribe"
	"github.com/mailgate/mailgate/internal/warnings"
)

// unsubscribe (issue 27): leave a mailing list the way the message
// offers (List-Unsubscribe): RFC 8058's one-click POST to an https URI of
// the header, or an email to its mailto address. Either is sent on the
// user's behalf to a third party, so it is gated like a send and takes a
// slot of the send limit: the request shows exactly where it goes (the
// URL or the address, subject and body), and the approval binds it (the
// message id and the description); the gate claims the approval before
// the POST or the send, so it happens at most once. Other links (http, a
// web page) are never opened: the answer lists them for the user.

type emailUnsubscribeIn struct {
	accountArg
	MessageID string `json:"message_id" jsonschema:"A message of the mailing list (its List-Unsubscribe header is used)"`
	Method    string `json:"method,omitempty" jsonschema:"one-click (RFC 8058 POST, preferred when offered) or mailto (an email to the list's unsubscribe address)"`
}

// Unsubscriber makes RFC 8058's one-click POST (internal/unsubscribe).
type Unsubscriber interface {
	Post(ctx context.Context, u *url.URL) error
}

var _ Unsubscriber = (*unsubscribe.Client)(nil)

// listHeaders is the Gmail call unsubscribe alone makes (gmailAs,
// email_gmail.go).
type listHeaders interface {
	ListUnsubscribe(ctx context.Context, id string) (gmail.ListHeaders, error)
}

var _ listHeaders = (*gmail.Client)(nil)

func (h *emailCall) unsubscriber() Unsubscriber {
	if h.d.Unsubscribe != nil {
		return h.d.Unsubscribe
	}
	return unsubscribe.NewClient()
}

func (h *emailHandlers) unsubscribe(ctx context.Context, _ *mcp.CallToolRequest, in emailUnsubscribeIn) (*mcp.CallToolResult, any, error) {
	id := strings.TrimSpace(in.MessageID)
	return h.call(ctx, "unsubscribe", "message:"+oneLine(id), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		if _, err := gmailID("message_id", id); err != nil {
			return invalid(err)
		}
		method := strings.TrimSpace(in.Method)
		if method != "" && method != "one-click" && method != "mailto" {
			return invalid(invalidField("method", "method is one-click or mailto"))
		}
		gm, err := gmailAs[listHeaders](h)
		if err != nil {
			return failed("Error: " + err.Error() + ". Nothing was done.")
		}
		lh, err := gm.ListUnsubscribe(ctx, id)
		if err != nil {
			return failed(readFailure(err, "Message", id, "reading the message"))
		}
		opts, err := unsubscribe.Parse(lh.ListUnsubscribe, lh.ListUnsubscribePost)
		if err != nil {
			return failed(fmt.Sprintf("Error: message %s has no List-Unsubscribe header: there is no unsubscribe mailgate can make for it. Nothing was done.", id))
		}
		useMail := opts.OneClick == nil || method == "mailto"
		if (useMail && opts.Mailto == nil) || (method == "one-click" && opts.OneClick == nil) {
			var b strings.Builder
			fmt.Fprintf(&b, "Error: message %s offers no ", id)
			if method == "mailto" {
				b.WriteString("mailto unsubscribe")
			} else {
				b.WriteString("one-click (RFC 8058) or mailto unsubscribe")
			}
			b.WriteString(". Nothing was done. mailgate never opens web pages for the user")
			if len(opts.Other) > 0 {
				fmt.Fprintf(&b, "; the user can open the list's own link themselves:\n%s", fenceText(strings.Join(opts.Other, "\n")))
			}
			return failed(b.String())
		}
		req := approval.Request{Account: h.reqAccount, Kind: approval.KindUnsubscribe, Target: "message:" + id}
		var ws []warnings.Warning
		var b strings.Builder
		fmt.Fprintf(&b, "Unsubscribe from the mailing list of message %s.\nFrom: %s\nSubject: %s\nDate: %s\n", id, headerLine(lh.From), headerLine(lh.Subject), headerLine(lh.Date))
		fromDomain := ""
		if a, err := mailmsg.ParseAddress(lh.From); err == nil {
			fromDomain = strings.ToLower(a.Address[strings.LastIndexByte(a.Address, '@')+1:])
		}
		var do gate.SendFunc
		if useMail {
			m := opts.Mailto
			to, err := mailmsg.ParseAddress(m.To)
			if err != nil {
				return failed("Error: the list's mailto address cannot be used: " + err.Error())
			}
			fmt.Fprintf(&b, "\nMethod: an email from the user's address (mailto, RFC 2369)\nTo: %s\nSubject: %s\nBody:\n%s\n", to.Address, warnings.Escape(m.Subject), strings.TrimRight(warnings.Escape(m.Body), "\n"))
			ws = append(ws, warnings.Address("Unsubscribe address", to.Address)...)
			if d := strings.ToLower(to.Address[strings.LastIndexByte(to.Address, '@')+1:]); fromDomain != "" && d != fromDomain && !strings.HasSuffix(d, "."+fromDomain) {
				ws = append(ws, warnings.Warning{Code: "unsubscribe-elsewhere", Text: fmt.Sprintf("The unsubscribe email goes to %s, not to the sender's domain %s.", d, fromDomain)})
			}
			req.Subject = "unsubscribe by email to " + to.Address
			raw, err := mailmsg.Build(mailmsg.Outgoing{To: to, Subject: m.Subject, Body: m.Body})
			if err != nil {
				return failed("Error building the unsubscribe email: " + err.Error())
			}
			do = func(ctx context.Context) (gate.SendResult, error) {
				sent, err := h.gm.Send(ctx, raw, "")
				if err != nil {
					return gate.SendResult{}, err
				}
				return gate.SendResult{MessageID: sent.ID, ThreadID: sent.ThreadID}, nil
			}
		} else {
			u := opts.OneClick
			fmt.Fprintf(&b, "\nMethod: one-click (RFC 8058): an HTTPS POST, no cookies, no redirect followed\nPOST %s\nBody: %s\n", warnings.Escape(u.String()), unsubscribe.OneClickBody)
			if host := strings.ToLower(u.Hostname()); fromDomain != "" && host != fromDomain && !strings.HasSuffix(host, "."+fromDomain) {
				ws = append(ws, warnings.Warning{Code: "unsubscribe-elsewhere", Text: fmt.Sprintf("The unsubscribe request goes to %s, not to the sender's domain %s.", host, fromDomain)})
			}
			if !strings.Contains(strings.ToLower(lh.AuthenticationResults), "dkim=pass") {
				ws = append(ws, warnings.Warning{Code: "unsubscribe-dkim", Text: "Gmail recorded no passing DKIM signature on this message: the header may not come from the list it names (RFC 8058 asks for one)."})
			}
			req.Subject = "unsubscribe by one-click POST to " + u.Hostname()
			do = func(ctx context.Context) (gate.SendResult, error) {
				return gate.SendResult{}, h.unsubscriber().Post(ctx, u)
			}
		}
		b.WriteString("\nIt tells the list's sender that this address reads its mail; it cannot be taken back.\n")
		req.Subject, req.Body = headerLine(req.Subject), b.String()
		return h.gatedSettings(ctx, "unsubscribe", req, ws, do)
	})
}

// fenceText fences sender-written lines shown outside a request.
func fenceText(s string) string { return fence.Text(searchFenceWhat, s) }
