package mirror

import (
	"bytes"
	"fmt"
	"mime/quotedprintable"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/outbox"
)

// Mirrored mail must never be mistaken for real mail, nor be deliverable if
// someone hits "reply": every agent gets the address
//
//	"BlueLake (agent)" <bluelake@<project-slug>.agentmail.invalid>
//
// .invalid is reserved by RFC 2606 and never resolves, so a reply bounces
// locally instead of reaching anyone, and the "(agent)" suffix and the
// agentmail label make the origin plain in any mail client.
const addrDomainSuffix = ".agentmail.invalid"

// AgentAddress is an agent's readable, undeliverable address.
func AgentAddress(project, agent string) *mail.Address {
	return &mail.Address{Name: agent + " (agent)", Address: strings.ToLower(hostLabel(agent)) + "@" + projectDomain(project)}
}

func projectDomain(project string) string { return hostLabel(project) + addrDomainSuffix }

// hostLabel reduces s to a DNS label (letters, digits, '-'; at most 63),
// so that any slug or agent name gives a syntactically valid address.
func hostLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 63 {
		out = strings.TrimRight(out[:63], "-")
	}
	if out == "" {
		out = "x"
	}
	return out
}

// MessageID is the deterministic RFC 5322 Message-ID of an agent message.
// Deterministic is the point: after a crash between insert and record the
// next attempt finds the earlier copy by rfc822msgid: instead of inserting
// a second one, and replies compute their References without a lookup.
// The creation time keeps ids of two stores mirroring into one mailbox
// apart.
func MessageID(project string, id int64, created time.Time) string {
	return fmt.Sprintf("<am-%d.%d@%s>", id, created.UnixMicro(), projectDomain(project))
}

// maxRefs bounds References: the first message plus the latest ones is
// what mail clients (and Gmail's threading) use.
const maxRefs = 20

// buildRaw renders m as an RFC 5322 message. prior are the messages before
// it in its agent thread, oldest first. Every header value goes through
// mailmsg.Header: agent-written text (subject, thread or channel name,
// project) is encoded, never written raw, so no value an agent chooses can
// end a header line and start another. A value that cannot be written is a
// *mailmsg.HeaderError, which no retry can cure.
func buildRaw(m *outbox.Message, prior []outbox.ThreadRef) ([]byte, error) {
	var h mailmsg.Header
	text := func(k, v string) {
		if v != "" {
			h.Text(k, v)
		}
	}
	addrs := func(k string, names []string) {
		out := make([]*mail.Address, len(names))
		for i, n := range names {
			out[i] = AgentAddress(m.ProjectSlug, n)
		}
		h.Addresses(k, out...)
	}
	h.Addresses("From", AgentAddress(m.ProjectSlug, m.From))
	addrs("To", m.To)
	addrs("Cc", m.CC)
	// Insert delivers nothing, so Bcc is shown for the supervisor's benefit.
	addrs("Bcc", m.BCC)
	text("Subject", oneLine(m.Subject))
	h.Structured("Date", m.CreatedAt.Format(time.RFC1123Z))
	h.Structured("Message-ID", MessageID(m.ProjectSlug, m.ID, m.CreatedAt))
	if len(prior) > 0 {
		parent := prior[len(prior)-1]
		for _, p := range prior {
			if p.ID == m.ReplyTo {
				parent = p
			}
		}
		h.Structured("In-Reply-To", MessageID(m.ProjectSlug, parent.ID, parent.CreatedAt))
		refs := prior
		if len(refs) > maxRefs {
			refs = append([]outbox.ThreadRef{refs[0]}, refs[len(refs)-maxRefs+1:]...)
		}
		ids := make([]string, len(refs))
		for i, r := range refs {
			ids[i] = MessageID(m.ProjectSlug, r.ID, r.CreatedAt)
		}
		h.Structured("References", strings.Join(ids, " "))
	}
	if m.Importance == "high" || m.Importance == "urgent" {
		h.Structured("Importance", "high")
	}
	text("X-Agent-Mail-Project", m.ProjectSlug)
	h.Structured("X-Agent-Mail-Id", strconv.FormatInt(m.ID, 10))
	text("X-Agent-Mail-Thread", m.ThreadKey)
	text("X-Agent-Mail-Importance", m.Importance)
	if m.AckRequired {
		h.Structured("X-Agent-Mail-Ack-Required", "yes")
	}
	h.Structured("MIME-Version", "1.0")
	h.Structured("Content-Type", "text/plain; charset=utf-8")
	h.Structured("Content-Transfer-Encoding", "quoted-printable")
	head, err := h.Bytes()
	if err != nil {
		return nil, fmt.Errorf("building the mirrored copy of message %d: %w", m.ID, err)
	}
	b := bytes.NewBuffer(head)
	qp := quotedprintable.NewWriter(b)
	body := strings.ReplaceAll(strings.ReplaceAll(m.BodyMD, "\r\n", "\n"), "\n", "\r\n")
	qp.Write([]byte(body))
	qp.Close()
	return b.Bytes(), nil
}

// oneLine keeps a header value on one line whatever the agent wrote (the
// encoder would carry a line break encoded; a subject reads better without).
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)
}
