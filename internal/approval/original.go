package approval

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/mailmsg"
	"github.com/mailgate/mailgate/internal/warnings"
)

// The message a reply answers, or a forward forwards, as mailgate read it
// from Gmail when it wrote the request: what the approver needs to judge
// the reply or the forward, kept beside the request so the approval page
// and a human reading the vault see the same bytes, without Gmail.
//
// It is kept in Logs/originals/<sha256>.md, named by the SHA-256 of the
// file's bytes (one file serves every request of the same message, and a
// file that does not hash to its name is not shown); the request file names
// it (original_sha256) and sums it up in its notes.
//
// It is not part of the approval hash, and need not be: the server reads it
// from Gmail itself, the agent naming only the message (message_id, and a
// reply's thread_id), which the approval binds; a Gmail message's content
// never changes once it exists, so the bound id fixes what is kept. What a
// forward sends of it (the quoted text, the attachments) is in the body and
// the attachment lines, which the approval binds as it binds every email.
// The kept file can only be changed by someone who can write the vault, who
// can approve anything anyway (docs/threat-model.md).

// DirOriginals is the folder, under Logs/, of the kept messages.
const DirOriginals = "originals"

// maxOriginalText bounds the text kept of a message: enough to judge a
// reply by, and the request's own limits for a forward's quoted text.
const maxOriginalText = 64 << 10

// Original is the message a reply answers or a forward forwards, as Gmail
// had it. Every field is the sender's: shown as text, never run.
type Original struct {
	MessageID                   string // Gmail's id
	From, Date, Subject, To, Cc string
	Text                        string // the text part (or the HTML part as text)
	Truncated                   bool   // Text was cut at maxOriginalText
	Attachments                 []OriginalFile
}

// OriginalFile is one attachment of the original message.
type OriginalFile struct {
	Name string
	Size int64
}

// originalFields is the kept file's frontmatter.
type originalFields struct {
	MessageID   string   `yaml:"message_id"`
	From        string   `yaml:"from"`
	Date        string   `yaml:"date"`
	Subject     string   `yaml:"subject"`
	To          string   `yaml:"to"`
	Cc          string   `yaml:"cc"`
	Attachments []string `yaml:"attachments"`
	Truncated   string   `yaml:"truncated"`
}

// renderOriginal lays o out as a vault file: its headers in the
// frontmatter, its text in a fenced block (so a Markdown viewer shows the
// sender's text as it is, fetching nothing it names).
func renderOriginal(kind Kind, o *Original) []byte {
	text := o.Text
	if len(text) > maxOriginalText {
		cut := maxOriginalText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text, o.Truncated = text[:cut], true
	}
	text = strings.ToValidUTF8(normalizeNewlines(text), "\uFFFD")
	kvs := []kv{{key: "message_id", value: o.MessageID, quoted: true}}
	for _, f := range [][2]string{{"from", o.From}, {"date", o.Date}, {"subject", o.Subject}, {"to", o.To}, {"cc", o.Cc}} {
		kvs = append(kvs, kv{key: f[0], value: strings.ToValidUTF8(f[1], "\uFFFD"), quoted: true})
	}
	if len(o.Attachments) > 0 {
		list := make([]string, len(o.Attachments))
		for i, a := range o.Attachments {
			list[i] = fmt.Sprintf("%s (%s, %d bytes)", strings.ToValidUTF8(a.Name, "\uFFFD"), mailmsg.FormatSize(a.Size), a.Size)
		}
		kvs = append(kvs, kv{key: "attachments", list: list})
	}
	if o.Truncated {
		kvs = append(kvs, kv{key: "truncated", value: "true"})
	}
	what := "answered by a reply"
	if kind == KindForward {
		what = "forwarded"
	}
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	body := fence + "text\n" + strings.TrimSuffix(text, "\n") + "\n" + fence + "\n"
	return renderFile("mailgate: the message "+what+", as Gmail had it when the request was written (never sent from here; shown to the approver).", kvs, body)
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// keepOriginal stores o under the hash of its file (once) and returns the
// hash; "" when there is nothing to keep or it could not be kept (the page
// then says so; the request is written all the same).
func (v *Vault) keepOriginal(kind Kind, o *Original) string {
	if o == nil || (kind != KindReply && kind != KindForward) {
		return ""
	}
	data := renderOriginal(kind, o)
	sha := sum(data)
	if err := v.keep(keptOriginal, sha, data); err != nil {
		return ""
	}
	return sha
}

var originalFileLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*) \(.*, (\d+) bytes\)$`) })

// ErrNoOriginal: the request keeps no original message (not a reply or a
// forward, or written before mailgate kept them), or it is gone.
var ErrNoOriginal = errors.New("the original message was not kept with this request")

// Original returns the message the request it answers or forwards, as
// kept when the request was written, checked against its hash.
func (v *Vault) Original(it *Item) (*Original, error) {
	sha := strings.ToLower(strings.TrimSpace(it.OriginalSHA256))
	if !isHex(sha) {
		return nil, ErrNoOriginal
	}
	data, err := v.readKept(keptOriginal, sha)
	if err != nil {
		return nil, err
	}
	var f originalFields
	rest, err := parseYAMLFront(data, &f)
	if err != nil {
		return nil, fmt.Errorf("reading the kept original: %w", err)
	}
	o := &Original{MessageID: f.MessageID, From: f.From, Date: f.Date, Subject: f.Subject, To: f.To, Cc: f.Cc, Truncated: f.Truncated == "true"}
	for _, a := range f.Attachments {
		f := OriginalFile{Name: a, Size: -1}
		if m := originalFileLine().FindStringSubmatch(a); m != nil {
			f.Name = m[1]
			f.Size, _ = strconv.ParseInt(m[2], 10, 64)
		}
		o.Attachments = append(o.Attachments, f)
	}
	rest = bytes.TrimLeft(rest, "\n")
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		return nil, errors.New("reading the kept original: no text block")
	}
	fence := strings.TrimSuffix(string(rest[:nl]), "text")
	text := strings.TrimSuffix(string(rest[nl+1:]), fence+"\n")
	if len(text) == len(rest)-nl-1 || strings.Trim(fence, "`") != "" {
		return nil, errors.New("reading the kept original: its text block is not closed")
	}
	o.Text = text
	return o, nil
}

// originalNote is the line a request file's notes give the original: who
// wrote it and when, and where it is kept.
func originalNote(req Request, sha string) string {
	o := req.Original
	if o == nil {
		return ""
	}
	what := "**Answering**"
	if req.Kind == KindForward {
		what = "**Forwarding**"
	}
	line := fmt.Sprintf("%s the message from %s of %s, subject “%s”", what, oneLineMD(warnings.Escape(o.From)), oneLineMD(warnings.Escape(o.Date)),
		oneLineMD(warnings.Escape(o.Subject)))
	if sha != "" {
		line += fmt.Sprintf(" (kept as it was: Logs/%s/%s.md; not sent from there)", DirOriginals, sha)
	}
	return line + ".\n\n"
}
