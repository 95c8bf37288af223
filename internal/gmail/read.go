package gmail

import (
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"slices"
	"strings"
	"unicode/utf8"

	gmailapi "google.golang.org/api/gmail/v1"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// maxTextBytes caps Message.Text. A mail body is untrusted input headed for
// an agent's context window; 100 KB keeps a newsletter readable without
// letting one message crowd out everything else.
const maxTextBytes = 100 << 10

// Message is one message read in full. Text fields are decoded and
// sanitized (mailmsg.Sanitize); MessageID, InReplyTo and References are the
// raw header values, as threading needs them.
type Message struct {
	Summary                        // ID, ThreadID, From, To, Cc, Subject, Date, Snippet, MessageID, Time
	ReplyTo, InReplyTo, References string
	Bcc                            string // only on the sender's own copies (Sent, drafts)
	Labels                         []string
	Text                           string   // the text/plain part, or the HTML part as text; truncated to 100 KB
	HTML                           bool     // the message has a text/html body part
	Attachments                    []string // file names
	// Files describes every attachment: the named parts of Attachments, in
	// the same order, then unnamed ones (inline images), whether Gmail
	// stores them apart or sent them inline.
	Files []Attachment
}

// Attachment is one attachment as Gmail describes it in format=full.
// Filename and MimeType come from the sender: sanitized for display, never
// to be trusted as a path.
type Attachment struct {
	// ID is Gmail's attachmentId, for GetAttachment; "" when the data is
	// inline (Data). Gmail gives a new one on every read of the message
	// (each stays usable): use it with the read it came from, never look it
	// up in another. PartID is the stable name of the part.
	ID       string
	PartID   string
	Filename string // "" for an unnamed part
	MimeType string
	Size     int64  // decoded bytes, as Gmail counts them
	Data     []byte // the bytes when Gmail sent them inline (small parts), else nil
}

// Message fetches one message (format=full). ErrNotFound if the id is
// unknown or malformed.
func (c *Client) Message(ctx context.Context, id string) (*Message, error) {
	if id == "" {
		return nil, fmt.Errorf("fetching message: %w", ErrNotFound)
	}
	m, err := retry(ctx, c, "messages.get", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.Message, error) {
		return c.svc.Users.Messages.Get(user, id).Format("full").Context(ctx).Do()
	})
	if err := callError(err, ErrNotFound, "fetching message %s", id); err != nil {
		return nil, err
	}
	return convert(m), nil
}

// Thread fetches a whole thread (format=full), oldest message first.
// ErrThreadNotFound if the id is unknown or not a Gmail API thread id.
func (c *Client) Thread(ctx context.Context, id string) ([]*Message, error) {
	t, err := c.getThread(ctx, id, "full")
	if err != nil {
		return nil, err
	}
	return mapped(oldestFirst(t.Messages), convert), nil
}

// getThread runs threads.get under the read policy, mapping 404 and 400
// to ErrThreadNotFound.
func (c *Client) getThread(ctx context.Context, id, format string, headers ...string) (*gmailapi.Thread, error) {
	if id == "" {
		return nil, fmt.Errorf("fetching thread: %w", ErrThreadNotFound)
	}
	t, err := retry(ctx, c, "threads.get", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.Thread, error) {
		call := c.svc.Users.Threads.Get(user, id).Format(format).Context(ctx)
		if len(headers) > 0 {
			call = call.MetadataHeaders(headers...)
		}
		return call.Do()
	})
	if err := callError(err, ErrThreadNotFound, "fetching thread %s", id); err != nil {
		return nil, err
	}
	return t, nil
}

// ReplyParent is what a reply needs from the message it answers.
// MessageID, References and InReplyTo are raw header values; From and
// ReplyTo are raw too (parse them with mailmsg.ParseAddress); Subject is
// decoded, with any line breaks turned into spaces.
// To and Cc are for a reply to all, read as Message reads them.
type ReplyParent struct {
	MessageID, References, InReplyTo, Subject, From, ReplyTo string
	To, Cc                                                   string
	GmailID, ThreadID                                        string
}

var parentHeaders = []string{"Message-ID", "Message-Id", "References", "In-Reply-To", "Subject", "From", "Reply-To", "To", "Cc"}

// ReplyParent fetches the thread's headers and finds the message with Gmail
// id messageID in it. With messageID "", it picks the latest message that
// is neither a draft nor in the trash and has a Message-ID. Errors:
// ErrThreadNotFound, ErrNotInThread, ErrNoMessageID (a reply without the
// parent's Message-ID would not thread, so it is refused).
func (c *Client) ReplyParent(ctx context.Context, threadID, messageID string) (*ReplyParent, error) {
	t, err := c.getThread(ctx, threadID, "metadata", parentHeaders...)
	if err != nil {
		return nil, err
	}
	var parent *gmailapi.Message
	if messageID != "" {
		for _, m := range t.Messages {
			if m.Id == messageID {
				parent = m
			}
		}
		if parent == nil {
			return nil, fmt.Errorf("finding message %s in thread %s: %w", messageID, threadID, ErrNotInThread)
		}
	} else {
		for _, m := range slices.Backward(t.Messages) {
			if !slices.Contains(m.LabelIds, "DRAFT") && !slices.Contains(m.LabelIds, "TRASH") &&
				strings.TrimSpace(headerMap(m.Payload).get("Message-ID")) != "" {
				parent = m
				break
			}
		}
		if parent == nil {
			return nil, fmt.Errorf("choosing a message to reply to in thread %s: %w", threadID, ErrNoMessageID)
		}
	}
	h := headerMap(parent.Payload)
	p := &ReplyParent{
		MessageID:  strings.TrimSpace(h.get("Message-ID")),
		References: strings.TrimSpace(h.get("References")),
		InReplyTo:  strings.TrimSpace(h.get("In-Reply-To")),
		Subject:    oneLine(decodeHeader(h.get("Subject"))),
		From:       strings.TrimSpace(h.get("From")),
		ReplyTo:    strings.TrimSpace(h.get("Reply-To")),
		To:         displayHeader(h.get("To")),
		Cc:         displayHeader(h.get("Cc")),
		GmailID:    parent.Id,
		ThreadID:   parent.ThreadId,
	}
	if p.ThreadID == "" {
		p.ThreadID = t.Id
	}
	if p.MessageID == "" {
		return nil, fmt.Errorf("reading message %s: %w", parent.Id, ErrNoMessageID)
	}
	return p, nil
}

func decodeHeader(v string) string {
	if d, err := wordDecoder.DecodeHeader(v); err == nil {
		return strings.TrimSpace(d)
	}
	return strings.TrimSpace(v)
}

// oneLine replaces characters no header value may hold, so that a value
// copied from a received message can go into a new one.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == 0 {
			return ' '
		}
		return r
	}, s)
}

// convert turns a format=full message into a Message.
func convert(m *gmailapi.Message) *Message {
	h := headerMap(m.Payload)
	out := &Message{
		Summary:    summarize(m),
		Bcc:        displayHeader(h.get("Bcc")),
		ReplyTo:    displayHeader(h.get("Reply-To")),
		InReplyTo:  strings.TrimSpace(h.get("In-Reply-To")),
		References: strings.TrimSpace(h.get("References")),
		Labels:     m.LabelIds,
	}
	var plain, htmlPart *gmailapi.MessagePart
	var unnamed []Attachment
	walkParts(m.Payload, func(p *gmailapi.MessagePart) {
		mt, _, _ := mime.ParseMediaType(p.MimeType)
		switch {
		case p.Filename != "":
			out.Attachments = append(out.Attachments, displayHeader(p.Filename))
			out.Files = append(out.Files, attachment(p, mt))
			return
		case len(p.Parts) == 0 && p.Body != nil && (p.Body.AttachmentId != "" ||
			(p.Body.Data != "" && !strings.HasPrefix(mt, "text/") && !strings.HasPrefix(mt, "multipart/"))):
			// Stored apart, or a small non-text leaf (an inline image) that
			// Gmail sent inline.
			unnamed = append(unnamed, attachment(p, mt))
			return
		}
		out.HTML = out.HTML || mt == "text/html"
		switch {
		case mt == "text/plain" && plain == nil && p.Body != nil && p.Body.Data != "":
			plain = p
		case mt == "text/html" && htmlPart == nil && p.Body != nil && p.Body.Data != "":
			htmlPart = p
		}
	})
	switch {
	case plain != nil:
		out.Text = partText(plain)
	case htmlPart != nil:
		out.Text = mailmsg.HTMLToText(partText(htmlPart))
	}
	out.Text = truncate(mailmsg.Sanitize(out.Text), maxTextBytes)
	out.Files = append(out.Files, unnamed...)
	return out
}

func attachment(p *gmailapi.MessagePart, mediaType string) Attachment {
	a := Attachment{PartID: p.PartId, Filename: displayHeader(p.Filename), MimeType: mediaType}
	if p.Body != nil {
		a.ID, a.Size = p.Body.AttachmentId, p.Body.Size
		if a.ID == "" && p.Body.Data != "" {
			a.Data, _ = decodeData(p.Body.Data)
		}
	}
	return a
}

// GetAttachment fetches the bytes of attachment attachmentID of message
// messageID (users.messages.attachments.get), under the read policy.
// ErrNotFound when the message is gone or the id is not one of its
// attachments.
func (c *Client) GetAttachment(ctx context.Context, messageID, attachmentID string) ([]byte, error) {
	if messageID == "" || attachmentID == "" {
		return nil, fmt.Errorf("fetching attachment: %w", ErrNotFound)
	}
	b, err := retry(ctx, c, "attachments.get", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.MessagePartBody, error) {
		return c.svc.Users.Messages.Attachments.Get(user, messageID, attachmentID).Context(ctx).Do()
	})
	if err := callError(err, ErrNotFound, "fetching attachment of message %s", messageID); err != nil {
		return nil, err
	}
	data, err := decodeData(b.Data)
	if err != nil {
		return nil, fmt.Errorf("decoding attachment of message %s: %w", messageID, err)
	}
	return data, nil
}

// walkParts visits p and its descendants depth-first, in document order.
func walkParts(p *gmailapi.MessagePart, visit func(*gmailapi.MessagePart)) {
	if p == nil {
		return
	}
	visit(p)
	for _, c := range p.Parts {
		walkParts(c, visit)
	}
}

// partText decodes a part's body. Gmail has undone the transfer encoding
// but not the charset: UTF-8 and ASCII pass through, Latin-1 (and, roughly,
// Windows-1252) is converted, anything else is left to Sanitize, which
// replaces invalid bytes with U+FFFD.
func partText(p *gmailapi.MessagePart) string {
	b, err := decodeData(p.Body.Data)
	if err != nil {
		return ""
	}
	charset := ""
	if ct := headers(p.Headers).get("Content-Type"); ct != "" {
		if _, params, err := mime.ParseMediaType(ct); err == nil {
			charset = strings.ToLower(params["charset"])
		}
	}
	switch charset {
	case "iso-8859-1", "latin1", "latin-1", "windows-1252", "cp1252":
		if !utf8.Valid(b) {
			r := make([]rune, len(b))
			for i, c := range b {
				r[i] = rune(c)
			}
			return string(r)
		}
	}
	return string(b)
}

// decodeData decodes Gmail's base64url, padded or not (Gmail pads raw but
// not attachment data), tolerating the standard alphabet as well.
func decodeData(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	s = strings.NewReplacer("+", "-", "/", "_", "\n", "", "\r", "").Replace(s)
	return base64.RawURLEncoding.DecodeString(s)
}

// truncate cuts s to at most n bytes on a character boundary and says so.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[… message truncated]"
}
