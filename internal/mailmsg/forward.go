package mailmsg

import (
	"strings"
)

// Original is a received message to forward, as the Gmail reader parsed
// it: header values decoded, the text (its text/plain part, or its HTML
// through HTMLToText), and the bytes of every attachment.
type Original struct {
	From, Date, Subject, To, Cc string
	Text                        string
	Attachments                 []Attachment
}

// Forwarded is the content of a forward, ready for Outgoing: Subject, Body
// and Attachments.
type Forwarded struct {
	Subject     string
	Body        string
	Attachments []Attachment
}

// ForwardHeading opens the forwarded block, as Gmail writes it.
const ForwardHeading = "---------- Forwarded message ---------"

// Forward returns a forward of orig: the subject with "Fwd:" once, the
// note (if any) above the forwarded block, the block of the original's
// From, Date, Subject, To and Cc, its text, and its attachments.
//
// Everything taken from the original passes through Sanitize (header
// values also lose their line breaks): it is a stranger's text about to go
// out under the user's name, and the approver must see all of it.
func Forward(orig Original, note string) Forwarded {
	var b strings.Builder
	if note = strings.TrimRight(note, " \t\r\n"); note != "" {
		b.WriteString(note)
		b.WriteString("\n\n")
	}
	b.WriteString(ForwardHeading + "\n")
	for _, f := range [][2]string{{"From", orig.From}, {"Date", orig.Date}, {"Subject", orig.Subject},
		{"To", orig.To}, {"Cc", orig.Cc}} {
		if v := oneLine(f[1]); v != "" {
			b.WriteString(f[0] + ": " + v + "\n")
		}
	}
	b.WriteString("\n")
	b.WriteString(strings.TrimRight(Sanitize(orig.Text), "\n"))
	b.WriteString("\n")
	return Forwarded{
		Subject:     ForwardSubject(oneLine(orig.Subject)),
		Body:        b.String(),
		Attachments: append([]Attachment(nil), orig.Attachments...),
	}
}

// oneLine sanitizes a header value for display on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(Sanitize(s)), " ")
}

// ForwardSubject returns the subject of a forward of a message with subject
// s: "Fwd: " is added unless s already starts with "Fwd:" or "Fw:" in any
// case, so forwarding a forward does not grow "Fwd: Fwd:".
func ForwardSubject(s string) string {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	if strings.HasPrefix(lower, "fwd:") || strings.HasPrefix(lower, "fw:") {
		return s
	}
	if s == "" {
		return "Fwd:"
	}
	return "Fwd: " + s
}
