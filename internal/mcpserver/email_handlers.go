package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/attach"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/fence"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/warnings"
)

func (h *emailHandlers) search(ctx context.Context, _ *mcp.CallToolRequest, in emailSearchIn) (*mcp.CallToolResult, any, error) {
	return h.reading(ctx, "search_email", "", func(ctx context.Context, h *emailCall) *mcp.CallToolResult { return h.doSearch(ctx, in) })
}

// reading runs a call that only reads: audited like any other, with no
// gate outcome.
func (h *emailHandlers) reading(ctx context.Context, tool, target string, do func(context.Context, *emailCall) *mcp.CallToolResult) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, tool, target, func(ctx context.Context, c *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		return do(ctx, c), gate.Outcome{}
	})
}

func (h *emailCall) doSearch(ctx context.Context, in emailSearchIn) *mcp.CallToolResult {
	max, refused := pageArgs(in.MaxResults, in.PageToken)
	if refused != nil {
		return refused
	}
	if strings.TrimSpace(in.Query) == "" {
		return errorResult("Error: query must not be empty")
	}
	if in.ByThread {
		return h.doSearchThreads(ctx, in, max) // email_threads.go
	}
	page, err := h.gm.SearchPage(ctx, in.Query, max, in.PageToken)
	if err != nil {
		return pageFailure(err, "repeat the search", "searching emails")
	}
	found := page.Results
	if len(found) == 0 {
		return textResult("No emails found matching: " + in.Query + nextPageLine("search_email", page.NextPageToken))
	}
	var b strings.Builder
	noun := "emails"
	if len(found) == 1 {
		noun = "email"
	}
	fmt.Fprintf(&b, "Found %d %s matching %q:\n", len(found), noun, in.Query)
	// Sender, subject, date and snippet are the sender's words: the whole
	// list is fenced, and every field is one line, so none can end the fence.
	var entries strings.Builder
	for i, m := range found {
		date := m.Date
		if !m.Time.IsZero() {
			date = m.Time.Format("2006-01-02")
		}
		fmt.Fprintf(&entries, "\n%d. From: %s | Subject: %s | Date: %s\n   Snippet: %s\n   Message ID: %s | Thread ID: %s\n",
			i+1, oneLine(m.From), oneLine(m.Subject), oneLine(date), oneLine(m.Snippet), m.ID, m.ThreadID)
	}
	b.WriteString(fence.Text(searchFenceWhat, entries.String()))
	b.WriteString(nextPageLine("search_email", page.NextPageToken))
	return textResult(b.String())
}

func (h *emailHandlers) read(ctx context.Context, _ *mcp.CallToolRequest, in emailReadIn) (*mcp.CallToolResult, any, error) {
	return h.reading(ctx, "read_email", "", func(ctx context.Context, h *emailCall) *mcp.CallToolResult { return h.doRead(ctx, in) })
}

func (h *emailCall) doRead(ctx context.Context, in emailReadIn) *mcp.CallToolResult {
	msgID, threadID := strings.TrimSpace(in.MessageID), strings.TrimSpace(in.ThreadID)
	switch {
	case msgID == "" && threadID == "":
		return errorResult("Error: give message_id or thread_id")
	case msgID != "" && threadID != "":
		return errorResult("Error: give message_id or thread_id, not both")
	}
	var msgs []*gmail.Message
	if msgID != "" {
		m, err := h.gm.Message(ctx, msgID)
		if err != nil {
			return errorResult(readFailure(err, "Message", msgID, "reading email"))
		}
		msgs = []*gmail.Message{m}
	} else {
		t, err := h.gm.Thread(ctx, threadID)
		if err != nil {
			return errorResult(readFailure(err, "Thread", threadID, "reading email"))
		}
		msgs = t
	}
	return textResult(formatMessages(msgs))
}

// What the fences of search_email and read_email say they hold.
const (
	searchFenceWhat = "EMAIL DATA"
	readFenceWhat   = "EMAIL CONTENT"
)

// formatMessages renders messages for an agent. Everything a sender wrote —
// the headers as well as the body and the attachment names — is fenced as
// untrusted: an email is written by whoever sent it, and may try to instruct
// the agent reading it. Ids and labels are Gmail's and stay outside.
func formatMessages(msgs []*gmail.Message) string {
	var b strings.Builder
	if len(msgs) > 1 {
		fmt.Fprintf(&b, "Thread %s: %d messages, oldest first.\n\n", msgs[0].ThreadID, len(msgs))
	}
	budget := maxReadTotal
	for i, m := range msgs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Message ID: %s | Thread ID: %s\n", m.ID, m.ThreadID)
		if len(m.Labels) > 0 {
			fmt.Fprintf(&b, "Labels: %s\n", strings.Join(m.Labels, ", "))
		}
		var c strings.Builder
		for _, hdr := range [][2]string{
			{"From", m.From}, {"To", m.To}, {"Cc", m.Cc}, {"Reply-To", m.ReplyTo},
			{"Date", m.Date}, {"Subject", m.Subject}, {"RFC Message-ID", m.MessageID},
		} {
			if hdr[1] != "" {
				fmt.Fprintf(&c, "%s: %s\n", hdr[0], oneLine(hdr[1]))
			}
		}
		if len(m.Attachments) > 0 {
			fmt.Fprintf(&c, "Attachments: %s\n", oneLine(strings.Join(m.Attachments, ", ")))
		}
		writeAttachmentLines(&c, m.Files)
		limit := min(maxReadBodyRune, budget)
		body, cut := truncate(m.Text, limit)
		budget -= utf8.RuneCountInString(body)
		c.WriteString("\n")
		c.WriteString(strings.TrimRight(body, "\n"))
		if cut > 0 {
			fmt.Fprintf(&c, "\n[truncated: %d more characters not shown]", cut)
		}
		c.WriteString("\n")
		b.WriteString(fence.Text(readFenceWhat, c.String()))
	}
	return b.String()
}

// truncate cuts s to at most n characters (runes, so UTF-8 stays valid) and
// reports how many were cut.
func truncate(s string, n int) (string, int) {
	if n < 0 {
		n = 0
	}
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s, 0
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i], total - n
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(mailmsg.Sanitize(s)), " ")
}

func (h *emailHandlers) draft(ctx context.Context, _ *mcp.CallToolRequest, in emailComposeIn) (*mcp.CallToolResult, any, error) {
	return h.newEmail(ctx, "draft_email", in, (*emailCall).doDraft)
}

func (h *emailHandlers) send(ctx context.Context, _ *mcp.CallToolRequest, in emailComposeIn) (*mcp.CallToolResult, any, error) {
	return h.newEmail(ctx, "send_email", in, (*emailCall).doSend)
}

// newEmail runs a draft or a send: an audited call whose input is checked
// first, once, by the one validator of an outgoing email, then its body
// format and attachments (refused before anything is written).
func (h *emailHandlers) newEmail(ctx context.Context, tool string, in emailComposeIn,
	do func(*emailCall, context.Context, approval.Request, extras) (*mcp.CallToolResult, gate.Outcome)) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, tool, audit.MaskAddress(in.To.first()), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		return h.checkEmail(ctx, in, func(ctx context.Context, req approval.Request, x extras) (*mcp.CallToolResult, gate.Outcome) {
			return do(h, ctx, req, x)
		})
	})
}

// checkEmail checks in (draft_email, send_email and update_draft's email) and
// hands do the request it describes, with its body format and attachments.
func (h *emailCall) checkEmail(ctx context.Context, in emailComposeIn,
	do func(context.Context, approval.Request, extras) (*mcp.CallToolResult, gate.Outcome)) (*mcp.CallToolResult, gate.Outcome) {
	if err := in.checkTo(); err != nil {
		return invalid(err)
	}
	email, err := mailmsg.Validate(mailmsg.Input{To: in.To, Cc: in.Cc, Bcc: in.Bcc, Subject: in.Subject, Body: in.Body})
	if err != nil {
		return invalid(err)
	}
	x, err := h.openExtras(in.BodyFormat, in.Body, in.Attachments, nil)
	if err != nil {
		return invalid(err)
	}
	req := approval.Request{Account: h.reqAccount, Kind: approval.KindSend, To: in.To[0], ToList: in.To[1:], Cc: in.Cc, Bcc: in.Bcc,
		Subject: email.Subject, Body: in.Body}
	if err := h.setSender(ctx, &req, in.emailSenderArgs); err != nil {
		return invalid(err)
	}
	if req, err = x.bind(req); err != nil {
		return invalid(err)
	}
	return do(ctx, req, x)
}

func (h *emailCall) doDraft(ctx context.Context, req approval.Request, x extras) (*mcp.CallToolResult, gate.Outcome) {
	o, err := x.outgoing(req, req)
	if err != nil {
		return invalid(err)
	}
	raw, err := mailmsg.Build(o)
	if err != nil {
		return invalid(err)
	}
	out := h.direct(ctx, "draft_email", "email_draft", req, "no draft was created", func(ctx context.Context) (gate.SendResult, error) {
		id, err := h.gm.CreateDraft(ctx, raw, "")
		if err == nil {
			h.recordDraft(ctx, id)
		}
		return gate.SendResult{MessageID: id}, err
	})
	switch out.Status {
	case gate.DevMode:
		return textResult(fmt.Sprintf("[DEV_MODE] Draft logged but not created. To: %s, Subject: %s",
			audit.MaskAddress(req.Address()), oneLine(req.Subject))), out
	case gate.Sent:
		return textResult(fmt.Sprintf("Draft created successfully. Draft ID: %s. Review it in your Gmail drafts folder.", out.Result.MessageID)), out
	}
	return errorResult("Error creating draft: " + userError(out.Err)), out
}

// invalid is the answer to a call refused before Gmail, the vault or the
// limiter are touched: the validator's text, audited as an error.
func invalid(err error) (*mcp.CallToolResult, gate.Outcome) {
	return errorResult("Error: " + err.Error()), gate.Outcome{Status: gate.Invalid, Err: err}
}

// failed is the answer to a call that failed before the gate (Gmail not
// connected, the parent of a reply unreadable): text, audited as an error.
func failed(text string) (*mcp.CallToolResult, gate.Outcome) {
	return errorResult(text), gate.Outcome{Status: gate.Failed}
}

func (h *emailCall) doSend(ctx context.Context, req approval.Request, x extras) (*mcp.CallToolResult, gate.Outcome) {
	return h.submit(ctx, gate.Call{Tool: "send_email", Request: req, Compose: h.composer(x, req, "", nil),
		Warnings: func(ctx context.Context) []warnings.Warning { return h.warnNew(ctx, req) }})
}

// warnNew is the "never written to" warning for each recipient.
func (h *emailCall) warnNew(ctx context.Context, req approval.Request) []warnings.Warning {
	to, cc, bcc := req.Recipients()
	all := slices.Concat(to, cc, bcc)
	h.sent.prefetch(ctx, h.gm, all)
	var ws []warnings.Warning
	for _, a := range all {
		ws = append(ws, h.sent.warn(ctx, h.gm, a)...)
	}
	return ws
}

// extras is what an email carries besides recipients, subject and text:
// the body's format (its HTML part) and the attachments, either files from
// the attachment folder or a forward's, already in memory. The files are
// read once more when the request binds them (bind), checked against what
// Open read, and those bytes — the ones whose SHA-256 the request and so
// the approval bind — are the ones built into the email and sent.
type extras struct {
	format  mailmsg.BodyFormat
	html    string // the agent's body when format is html
	folder  attach.Folder
	files   []attach.File
	carried []mailmsg.Attachment
	loaded  []mailmsg.Attachment // the files' bytes, once bound
}

// openExtras checks the body format and opens the attachment files: a path
// outside the folder, through a symlink leading out, or too large is
// refused here, before any request is written.
func (h *emailHandlers) openExtras(format, body string, paths []string, carried []mailmsg.Attachment) (extras, error) {
	x := extras{format: mailmsg.BodyFormat(strings.TrimSpace(format)), folder: h.d.Attachments, carried: carried}
	if x.format == mailmsg.FormatHTML {
		x.html = body
	}
	if _, err := mailmsg.RenderBody(x.format, ""); err != nil {
		return x, &mailmsg.InvalidError{Field: "body_format", Value: format, Err: err}
	}
	if len(paths) > 0 {
		files, err := x.folder.Open(paths)
		if err != nil {
			return x, err
		}
		x.files = files
	}
	return x, nil
}

// bind adds what the approval must bind besides the text to req: the HTML
// part's digest and each attachment's name, size and SHA-256, of the bytes
// it reads here, kept in x for the email. An HTML body is read by the
// approver as its text rendering, which becomes req's body.
func (x *extras) bind(req approval.Request) (approval.Request, error) {
	if x.format == mailmsg.FormatHTML {
		parts, err := mailmsg.RenderBody(x.format, req.Body)
		if err != nil {
			return req, err
		}
		req.Body = parts.Text
	}
	if len(x.files) > 0 {
		atts, err := x.folder.Attachments(x.files)
		if err != nil {
			return req, err
		}
		x.loaded = atts
	}
	o, err := x.outgoing(req, req)
	if err != nil {
		return req, err
	}
	d, err := mailmsg.Digest(o)
	if err != nil {
		return req, err
	}
	req.HTMLSHA256 = d.HTMLSHA256
	if o.HTML != "" {
		// What the approver and the agent are told of the HTML part: where
		// it came from and every link in it.
		req.HTMLFrom, req.HTMLLinks = x.format, mailmsg.HTMLLinks(o.HTML)
		if x.format == mailmsg.FormatHTML {
			req.HTML = o.HTML // kept for the approval page (approval/htmlpart.go)
		}
	}
	for _, a := range d.Attachments {
		req.Attachments = append(req.Attachments, approval.Attachment{Name: a.Name, Size: a.Size, SHA256: a.SHA256})
	}
	return req, nil
}

// outgoing is the email for final (the approved request; asked is the
// agent's): bare addresses only (a display name is not bound), the body
// rendered in its format, the attachments bound (bind), or else read now (a
// file changed since Open read it is refused: attach.ChangedError).
func (x extras) outgoing(final, asked approval.Request) (mailmsg.Outgoing, error) {
	o := mailmsg.Outgoing{Subject: final.Subject, Body: final.Body, From: final.From}
	to, cc, bcc := final.Recipients()
	o.ToList, o.Cc, o.Bcc = bare(to), bare(cc), bare(bcc)
	switch x.format {
	case mailmsg.FormatHTML:
		if final.Body != asked.Body {
			return o, errors.New("the approver corrected the text of an email written in HTML, and its HTML part cannot follow the correction; ask for a new request with the corrected HTML")
		}
		// The agent's HTML is re-rendered: the text part was derived from it.
		parts, err := mailmsg.RenderBody(x.format, x.html)
		if err != nil {
			return o, err
		}
		o.Body, o.HTML = parts.Text, parts.HTML
		if err := sameHTML(o, final); err != nil {
			return o, err
		}
	case mailmsg.FormatMarkdown:
		parts, err := mailmsg.RenderBody(x.format, final.Body)
		if err != nil {
			return o, err
		}
		o.HTML = parts.HTML
		if final.Body == asked.Body {
			if err := sameHTML(o, final); err != nil {
				return o, err
			}
		}
	}
	o.Attachments = x.carried
	switch {
	case x.loaded != nil:
		o.Attachments = x.loaded
	case len(x.files) > 0:
		atts, err := x.folder.Attachments(x.files)
		if err != nil {
			return o, err
		}
		o.Attachments = atts
	}
	return o, nil
}

// sameHTML checks that the HTML part about to go is the one the approval
// bound (final.HTMLSHA256; "" before anything was bound): the renderer and
// the policy are deterministic, so a difference means a bug, and sending
// HTML nobody approved must not be its outcome. A Markdown body the
// approver corrected is re-rendered from their text and not checked here.
func sameHTML(o mailmsg.Outgoing, final approval.Request) error {
	if final.HTMLSHA256 == "" {
		return nil
	}
	d, err := mailmsg.Digest(o)
	if err != nil {
		return err
	}
	if !strings.EqualFold(d.HTMLSHA256, final.HTMLSHA256) {
		return errors.New("the HTML part rendered now differs from the one approved; nothing was sent: ask for a new request")
	}
	return nil
}

func bare(list []string) []*mail.Address {
	out := make([]*mail.Address, len(list))
	for i, a := range list {
		out[i] = &mail.Address{Address: a}
	}
	return out
}

// composer returns the gate's ComposeFunc for an email (in threadID, with a
// reply's threading headers from parent when it is one). The gate calls it
// once per run: with the request as its new request file describes it, or
// with the approval's final request (the approver may have corrected it)
// before anything is claimed, so nothing after the claim may fail for a
// reason that was knowable earlier. Either way the email is built once, and
// the bytes built are the bytes sent (or kept for send_at: gate/later.go).
func (h *emailCall) composer(x extras, asked approval.Request, threadID string, parent *gmail.ReplyParent) gate.ComposeFunc {
	return func(final approval.Request) (gate.Composed, error) {
		raw, err := buildRaw(x, asked, final, parent)
		if err != nil {
			return gate.Composed{}, err
		}
		email := &gate.Prepared{Raw: raw, ThreadID: threadID}
		return gate.Composed{Email: email, Send: func(ctx context.Context) (gate.SendResult, error) {
			sent, err := h.gm.Send(ctx, email.Raw, email.ThreadID)
			if err != nil {
				return gate.SendResult{}, err
			}
			to, cc, bcc := final.Recipients()
			for _, a := range slices.Concat(to, cc, bcc) {
				h.sent.remember(a)
			}
			return gate.SendResult{MessageID: sent.ID, ThreadID: sent.ThreadID}, nil
		}}, nil
	}
}

// buildRaw builds the email for final (the approved request; asked is the
// agent's), as it goes to Gmail.
func buildRaw(x extras, asked, final approval.Request, parent *gmail.ReplyParent) ([]byte, error) {
	o, err := x.outgoing(final, asked)
	if err != nil {
		return nil, err
	}
	// The Message-ID fixed when the request was written (approval
	// MessageIDFor): what finds this email in Sent if mailgate stops
	// before recording that it left.
	o.MessageID = final.OutgoingMessageID
	if parent != nil {
		o.InReplyTo = parent.MessageID
		o.References = mailmsg.ReplyReferences(parent.References, parent.InReplyTo, parent.MessageID)
	}
	return mailmsg.Build(o)
}

// submit runs c through the gate and answers with the text rendered from its
// typed outcome: isError for every refusal, so that agents stop instead of
// chaining calls. The gate composes the email (c.Compose) once per run, also
// before it writes a request file, so a request that could never be sent
// (too large) writes none.
func (h *emailCall) submit(ctx context.Context, c gate.Call) (*mcp.CallToolResult, gate.Outcome) {
	if c.Request.Account != h.reqAccount {
		// Every gated request names the call's account (the approval binds
		// it); a handler that forgot would send from the default.
		return invalid(fmt.Errorf("internal error: %s's request names account %q, the call %q; nothing was done", c.Tool, c.Request.Account, h.reqAccount))
	}
	out := h.d.Gate.Run(ctx, c)
	if h.elicitApproval(ctx, out) { // APPROVAL_ELICIT: email_elicit.go
		out = h.d.Gate.Run(ctx, c)
	}
	if out.Status.OK() {
		return textResult(out.Message()), out
	}
	return errorResult(out.Message()), out
}

func (h *emailHandlers) reply(ctx context.Context, _ *mcp.CallToolRequest, in emailReplyIn) (*mcp.CallToolResult, any, error) {
	return h.call(ctx, "reply_email", "thread:"+oneLine(in.ThreadID), func(ctx context.Context, h *emailCall) (*mcp.CallToolResult, gate.Outcome) {
		return h.doReply(ctx, in)
	})
}

func (h *emailCall) doReply(ctx context.Context, in emailReplyIn) (*mcp.CallToolResult, gate.Outcome) {
	email, err := mailmsg.Validate(mailmsg.Input{Reply: true, ThreadID: in.ThreadID, MessageID: in.MessageID, Body: in.Body})
	if err != nil {
		return invalid(err)
	}
	x, err := h.openExtras(in.BodyFormat, in.Body, in.Attachments, nil)
	if err != nil {
		return invalid(err)
	}
	threadID, msgID := email.ThreadID, email.MessageID
	// Reading the parent is a read: it happens before the gate, so a wrong
	// thread never writes a request or consumes an approval.
	parent, err := h.gm.ReplyParent(ctx, threadID, msgID)
	switch {
	case errors.Is(err, gmail.ErrThreadNotFound), errors.Is(err, gmail.ErrNotFound):
		return failed(fmt.Sprintf("Error: Thread ID %s not found or no longer accessible.", threadID))
	case errors.Is(err, gmail.ErrNotInThread):
		return failed(fmt.Sprintf("Error: Message ID %s is not in thread %s.", msgID, threadID))
	case errors.Is(err, gmail.ErrNoMessageID):
		return failed(fmt.Sprintf("Error: Message ID %s has no Message-ID header, so a correctly threaded reply cannot be built.", msgID))
	case err != nil:
		return failed("Error replying to thread: " + userError(err))
	}
	toHeader := parent.ReplyTo
	if strings.TrimSpace(toHeader) == "" {
		toHeader = parent.From
	}
	to, err := firstAddress(toHeader)
	if err != nil {
		// The error quotes the sender's header: fenced.
		return failed("Error: the message to reply to has no usable sender address:\n" + fence.Text(readFenceWhat, err.Error()))
	}
	req := approval.Request{Account: h.reqAccount, Kind: approval.KindReply, To: to.Address, ThreadID: threadID, MessageID: msgID,
		Subject: mailmsg.ReplySubject(parent.Subject), Body: in.Body}
	if err := h.setSender(ctx, &req, in.emailSenderArgs); err != nil {
		return invalid(err)
	}
	if in.ReplyAll {
		if req.ToList, req.Cc, err = h.replyAll(ctx, parent, to.Address); err != nil {
			return failed("Error: cannot reply to all: " + userError(err))
		}
	}
	if req, err = x.bind(req); err != nil {
		return invalid(err)
	}
	// The input was validated above, before Gmail was read; what the parent
	// added (its sender, reply-all's recipients, the subject) the gate
	// checks with the whole request (gate.Run), as it checks every request.
	// The approver sees where the reply really goes: Reply-To, when the
	// message has one, and how it differs from the sender.
	return h.submit(ctx, gate.Call{Tool: "reply_email", Request: req, Compose: h.composer(x, req, threadID, parent),
		Original: h.replyOriginal(msgID), // email_original.go
		Warnings: func(ctx context.Context) []warnings.Warning {
			ws := warnings.ReplyTo(parent.From, parent.ReplyTo)
			ws = append(ws, warnings.DisplayName("Reply-To", toHeader)...)
			return append(ws, h.warnNew(ctx, req)...)
		}})
}

// replyAll returns the further recipients of a reply to all of parent:
// its To and Cc (read with the parent's other headers, so no further read
// of the message), each kept in its header, minus the user's own
// addresses, the reply's recipient to, and repeats.
func (h *emailCall) replyAll(ctx context.Context, parent *gmail.ReplyParent, to string) (more, cc []string, err error) {
	own, err := h.gm.OwnAddresses(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("reading your addresses: %w", err)
	}
	seen := map[string]bool{strings.ToLower(to): true}
	for _, a := range own {
		seen[strings.ToLower(a)] = true
	}
	keep := func(header string) ([]string, error) {
		if strings.TrimSpace(header) == "" {
			return nil, nil
		}
		list, err := mail.ParseAddressList(header)
		if err != nil {
			return nil, fmt.Errorf("the message's recipients cannot be read (%w)", err)
		}
		var out []string
		for _, a := range list {
			addr, err := mailmsg.ParseAddress(a.Address)
			if err != nil {
				return nil, fmt.Errorf("the message's recipient %s cannot be used (%w)", mailmsg.Quote(a.Address), err)
			}
			if k := strings.ToLower(addr.Address); !seen[k] {
				seen[k] = true
				out = append(out, addr.Address)
			}
		}
		return out, nil
	}
	if more, err = keep(parent.To); err != nil {
		return nil, nil, err
	}
	cc, err = keep(parent.Cc)
	return more, cc, err
}

// firstAddress takes the first address of a From or Reply-To header.
func firstAddress(header string) (*mail.Address, error) {
	list, err := mail.ParseAddressList(header)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, errors.New("no address")
	}
	return mailmsg.ParseAddress(list[0].Address)
}
