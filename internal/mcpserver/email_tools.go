package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/attach"
	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/warnings"

	"golang.org/x/sync/errgroup"
)

// SentLookup is the gate's look-up of an email in Sent: by its Message-ID
// (rfc822msgid:), then, since Gmail may replace the Message-ID of an API
// send, by recipient, subject and time (in:sent to: subject: after:).
func SentLookup(gm GmailGetter) gate.SentLookup {
	return func(ctx context.Context, q gate.SentQuery) (gate.SendResult, bool, error) {
		f, err := gm(ctx, account.Resolve(q.Account))
		if err != nil {
			return gate.SendResult{}, false, err
		}
		if q.MessageID != "" {
			ref, found, err := f.FindRFC822(ctx, q.MessageID)
			if err != nil || found {
				return gate.SendResult{MessageID: ref.ID, ThreadID: ref.ThreadID}, found, err
			}
		}
		subject := strings.Join(strings.Fields(strings.Map(func(r rune) rune {
			if r == '"' || r < ' ' {
				return ' '
			}
			return r
		}, q.Subject)), " ")
		if q.To == "" || subject == "" {
			return gate.SendResult{}, false, nil
		}
		query := fmt.Sprintf(`in:sent to:%q subject:"%s"`, q.To, subject)
		if !q.After.IsZero() {
			query += fmt.Sprintf(" after:%d", q.After.Unix())
		}
		page, err := f.SearchPage(ctx, query, 5, "")
		if err != nil {
			return gate.SendResult{}, false, err
		}
		for _, m := range page.Results {
			if strings.TrimSpace(m.Subject) == strings.TrimSpace(q.Subject) {
				return gate.SendResult{MessageID: m.ID, ThreadID: m.ThreadID}, true, nil
			}
		}
		return gate.SendResult{}, false, nil
	}
}

// EmailDeps are the email tool set's dependencies.
type EmailDeps struct {
	// Gmail returns the mailbox a call works on, connecting first if need
	// be (email_gmail.go): asked once at the start of every email tool
	// call. Until Gmail is connected its error is the call's answer
	// (phrased for the user: what to run, where the token goes) and the
	// call does nothing else: no request file is written for an email
	// that could not be sent.
	Gmail GmailGetter
	// Accounts lists the home's accounts, the default first
	// (account.List); nil: the default alone. With more than one, every
	// request, answer and audit line names its account.
	Accounts func() []string
	// Elicit (APPROVAL_ELICIT) asks the human in a client that declares
	// elicitation to approve a gated email in the client (email_elicit.go);
	// ElicitTimeout bounds the question (DefaultElicitTimeout when 0).
	Elicit        bool
	ElicitTimeout time.Duration
	// Gate: sends and replies go through it, and only through it; drafts
	// ask it (Gate.Direct), so DEV_MODE is decided in one place.
	Gate   *gate.Gate
	Audit  *audit.Log
	Logger *slog.Logger
	// Downloads is where get_attachment saves files (attach.DownloadDir of
	// the mailgate home); with no Dir, it saves nothing and says so.
	Downloads attach.Downloads
	// OrganizeLimiter counts modify_labels and untrash_email calls
	// (ORGANIZE_LIMIT, ratelimit.BucketOrganize); nil: no limit.
	OrganizeLimiter *ratelimit.Limiter
	// Attachments is the one folder files may be sent from
	// (ATTACHMENTS_DIR); its zero value refuses every attachment.
	Attachments attach.Folder
	// Drafts records the drafts draft_email created: the only ones
	// update_draft changes (drafts.Registry). nil: update_draft refuses
	// every draft.
	Drafts DraftRecord
	// Unsubscribe makes unsubscribe's one-click POSTs; nil: a client that
	// reaches public https addresses only (unsubscribe.NewClient).
	Unsubscribe Unsubscriber
}

// DraftRecord is the record of the drafts mailgate created.
type DraftRecord interface {
	Record(ctx context.Context, id string) error
	Created(ctx context.Context, id string) (bool, error)
}

// Size bounds on what an agent may submit or receive.
const (
	maxReadBodyRune = 20_000  // read_email: per message body, in characters
	maxReadTotal    = 100_000 // read_email: whole thread, in characters
)

// The tool inputs (the inventory, inventory.go, lists the tools). Field
// names and requiredness are the contract's.
type emailSearchIn struct {
	accountArg
	Query      string `json:"query" jsonschema:"Gmail search query (e.g. 'from:user@example.com subject:invoice after:2026/01/01')"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"Maximum number of results to return (1-50, default 5)"`
	PageToken  string `json:"page_token,omitempty" jsonschema:"The next page's token, from the last line of a previous search_email answer with the same query; omit for the first page"`
	ByThread   bool   `json:"by_thread,omitempty" jsonschema:"One line per conversation (its subject, senders, message count and newest message) instead of one per message"`
}

type emailReadIn struct {
	accountArg
	MessageID string `json:"message_id,omitempty" jsonschema:"Gmail message ID to read (from search_email); give this or thread_id"`
	ThreadID  string `json:"thread_id,omitempty" jsonschema:"Gmail thread ID to read whole; give this or message_id"`
}

type emailComposeIn struct {
	accountArg
	emailRecipientArgs
	Subject string `json:"subject" jsonschema:"Email subject line"`
	Body    string `json:"body" jsonschema:"Email body: plain text unless body_format says otherwise"`
	emailContentArgs
	emailSenderArgs
}

type emailReplyIn struct {
	accountArg
	ThreadID  string `json:"thread_id" jsonschema:"Gmail thread ID to reply to"`
	MessageID string `json:"message_id" jsonschema:"Gmail message ID to reply to (for correct threading headers)"`
	Body      string `json:"body" jsonschema:"Reply body: plain text unless body_format says otherwise"`
	ReplyAll  bool   `json:"reply_all,omitempty" jsonschema:"Also reply to the message's other recipients (its To and Cc, keeping Cc as Cc), minus your own addresses"`
	emailContentArgs
	emailSenderArgs
}

// emailContentArgs are how the body of an email the agent writes is read
// and what is attached to it (draft_email, send_email, update_draft,
// reply_email); openExtras opens them.
type emailContentArgs struct {
	BodyFormat  string   `json:"body_format,omitempty" jsonschema:"text (default), markdown or html: markdown and html also send an HTML part"`
	Attachments []string `json:"attachments,omitempty" jsonschema:"Files to attach: paths inside the attachment folder (ATTACHMENTS_DIR; a relative path is taken inside it)"`
}

// emailRecipientArgs are the recipients of an email the agent writes
// (draft_email, send_email, update_draft, forward_email).
type emailRecipientArgs struct {
	To  recipientsArg `json:"to" jsonschema:"Recipient email address, or a list of them"`
	Cc  []string      `json:"cc,omitempty" jsonschema:"Copy recipients (email addresses)"`
	Bcc []string      `json:"bcc,omitempty" jsonschema:"Blind copy recipients (email addresses; the other recipients do not see them)"`
}

// checkTo refuses an email with nobody in to.
func (r emailRecipientArgs) checkTo() error {
	if len(r.To) == 0 {
		return &mailmsg.InvalidError{Field: "to", Text: "at least one recipient is required in to"}
	}
	return nil
}

// emailSenderArgs are the arguments of every email that is sent (send_email,
// reply_email, forward_email; draft_email and update_draft take from): whose
// address it goes out from and when.
type emailSenderArgs struct {
	From   string `json:"from,omitempty" jsonschema:"Send from this address: one of your Gmail send-as addresses, verified in Gmail (omit for your default address)"`
	SendAt string `json:"send_at,omitempty" jsonschema:"Send later: the time to send it, RFC 3339 with a zone (2026-12-01T09:00:00+01:00). The approval binds the time; once approved and called again, the email is kept and sent once at that time. Omit to send as soon as it is approved"`
}

// setSender checks a's from (email_sendas.go) and send_at
// (email_schedule.go) and binds them into req.
func (h *emailCall) setSender(ctx context.Context, req *approval.Request, a emailSenderArgs) error {
	var err error
	if req.From, err = h.sendAs(ctx, a.From); err != nil {
		return err
	}
	req.SendAt, err = sendAtArg(a.SendAt, h.now())
	return err
}

// recipientsArg is a `to` given as one address (the contract's string) or
// a list of them.
type recipientsArg []string

func (r *recipientsArg) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*r = recipientsArg{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(data, &list); err != nil {
		return errors.New("to must be an email address or a list of them")
	}
	*r = list
	return nil
}

func (r recipientsArg) first() string {
	if len(r) == 0 {
		return ""
	}
	return r[0]
}

// recipientSchema lets `to` be a string or a list of strings, and bounds
// every recipient list, and enumerates body_format.
func recipientSchema(s *jsonschema.Schema) {
	max := mailmsg.MaxRecipients
	if p := s.Properties["to"]; p != nil {
		p.Type, p.Types = "", []string{"string", "array"}
		p.Items = &jsonschema.Schema{Type: "string"}
		p.MaxItems = &max
	}
	for _, k := range []string{"cc", "bcc"} {
		if p := s.Properties[k]; p != nil {
			p.MaxItems = &max
		}
	}
	if p := s.Properties["body_format"]; p != nil {
		p.Enum = []any{string(mailmsg.FormatText), string(mailmsg.FormatMarkdown), string(mailmsg.FormatHTML)}
	}
}

func boundMaxResults(s *jsonschema.Schema) {
	p := s.Properties["max_results"]
	p.Minimum, p.Maximum = ptr(1.0), ptr(50.0)
	p.Default = json.RawMessage("5")
}

type emailHandlers struct {
	d    *EmailDeps
	sent sentCache // the default account's (emailCall.sent is the call's)

	smu   sync.Mutex
	sents map[string]*sentCache // the other accounts'
}

// sentFor is account's memory of its Sent folder: one account having
// written to an address says nothing of another's.
func (h *emailHandlers) sentFor(name string) *sentCache {
	if account.IsDefault(name) {
		return &h.sent
	}
	h.smu.Lock()
	defer h.smu.Unlock()
	if h.sents == nil {
		h.sents = map[string]*sentCache{}
	}
	if h.sents[name] == nil {
		h.sents[name] = &sentCache{}
	}
	return h.sents[name]
}

// requestAccount is what a call of account name writes into its requests
// and audit lines: the name, except for the default account of a home
// with one account (""), whose files stay as they were.
func (h *emailHandlers) requestAccount(name string) string {
	if !account.IsDefault(name) || (h.d.Accounts != nil && len(h.d.Accounts()) > 1) {
		return name
	}
	return ""
}

// sentCache remembers, for this process, which recipients the Sent folder
// (or a send of this process) showed: Gmail is asked once per address, and
// only when a request file is written.
type sentCache struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (c *sentCache) remember(addr string) { c.note(addr, true) }

// note records what Sent showed of addr: once known, always known.
func (c *sentCache) note(addr string, known bool) {
	key := strings.ToLower(addr)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[key] = c.seen[key] || known
}

// prefetch asks Gmail about every address of addrs not known yet, at most
// eight at a time, so that an email to many recipients waits for about one
// round trip instead of one per recipient; warn then answers from memory.
func (c *sentCache) prefetch(ctx context.Context, mb GmailReader, addrs []string) {
	c.mu.Lock()
	var ask []string
	for _, a := range addrs {
		if _, ok := c.seen[strings.ToLower(a)]; !ok && !slices.ContainsFunc(ask, func(b string) bool { return strings.EqualFold(a, b) }) {
			ask = append(ask, a)
		}
	}
	c.mu.Unlock()
	if len(ask) < 2 {
		return // warn asks for a single one itself
	}
	var g errgroup.Group
	g.SetLimit(8)
	for _, a := range ask {
		g.Go(func() error {
			if known, err := mb.HasSentTo(ctx, a); err == nil {
				c.note(a, known)
			}
			return nil
		})
	}
	g.Wait()
}

// warn returns the "never written to" warning for addr, or nothing when
// mail was sent to it before or the question cannot be answered (an error
// is not a reason to alarm the human; it is logged by nobody's choice: the
// warning is advice, never a gate).
func (c *sentCache) warn(ctx context.Context, mb GmailReader, addr string) []warnings.Warning {
	c.mu.Lock()
	known, ok := c.seen[strings.ToLower(addr)]
	c.mu.Unlock()
	if !ok {
		var err error
		if known, err = mb.HasSentTo(ctx, addr); err != nil {
			return nil
		}
		c.note(addr, known)
	}
	if known {
		return nil
	}
	return []warnings.Warning{{Code: warnings.CodeNewRecipient,
		Text: "You have never written to " + addr + " before (nothing to this address in Sent): check it is the person you mean."}}
}

// call runs one email tool call under its own correlation id and records
// its audit line, whatever its outcome. do gets the call's mailbox
// (EmailDeps.Gmail); until Gmail is connected the call answers the getter's
// error and does nothing else. The line's result is the call's
// typed outcome (gate.Status.AuditResult), never read back from the answer's
// text, so rewording an answer cannot change the log. A read has no gate
// outcome (its Status is unset): it succeeded or it did not. A tool whose
// line also says what it did (modify_labels: how many messages, which
// labels) sets the call's detail.
func (h *emailHandlers) call(ctx context.Context, tool, target string, do func(context.Context, *emailCall) (*mcp.CallToolResult, gate.Outcome)) (*mcp.CallToolResult, any, error) {
	start := time.Now()
	ctx = withCorrelation(ctx)
	var res *mcp.CallToolResult
	out, detail := gate.Outcome{Status: gate.Failed}, ""
	name := accountOf(ctx) // the call's account argument (withAccount)
	reqAccount := name
	if err := account.ValidName(name); err != nil {
		res = errorResult("Error: " + err.Error())
	} else if mb, err := h.d.Gmail(ctx, name); err != nil {
		res = errorResult(err.Error())
	} else {
		reqAccount = h.requestAccount(name)
		c := &emailCall{emailHandlers: h, gm: mb, account: name, reqAccount: reqAccount, sent: h.sentFor(name)}
		res, out = do(ctx, c)
		detail = c.detail
	}
	if h.d.Audit == nil {
		return res, nil, nil
	}
	result := out.Status.AuditResult()
	if out.Status == 0 && !res.IsError {
		result = audit.ResultSuccess
	}
	e := audit.Entry{
		Time: time.Now().UTC(), CorrelationID: audit.CorrelationID(ctx), Tool: tool, ActionType: tool,
		Result: result, Target: target, DurationMS: time.Since(start).Milliseconds(), Account: reqAccount,
		GmailMessageID: out.Result.MessageID, GmailThreadID: out.Result.ThreadID, Detail: detail,
	}
	if err := h.d.Audit.Record(e); err != nil {
		h.d.Logger.Error("writing audit log", "error", err)
	}
	return res, nil, nil
}

// withCorrelation gives the call one correlation id, shared by its own audit
// line and every gate decision it leads to.
func withCorrelation(ctx context.Context) context.Context {
	return audit.WithCorrelationID(ctx, audit.NewCorrelationID())
}

// readFailure is the text of a failed read of a message or a thread (kind
// "Message" or "Thread"): the id is unknown or gone, or doing it failed
// ("reading email").
func readFailure(err error, kind, id, doing string) string {
	if errors.Is(err, gmail.ErrNotFound) || errors.Is(err, gmail.ErrThreadNotFound) {
		return fmt.Sprintf("Error: %s ID %s not found or no longer accessible.", kind, id)
	}
	return "Error " + doing + ": " + userError(err)
}

// userError formats an error from Gmail for the agent, keeping re-auth and
// rate-limit guidance intact.
func userError(err error) string {
	var reauth *gmail.ReauthError
	if errors.As(err, &reauth) {
		return reauth.Error()
	}
	return err.Error()
}
