package localgmail

import (
	"bytes"
	"strings"
)

// Header-section handling that keeps a message's bytes intact: Gmail stores
// what it is given, and only touches the headers it owns on send.

// headerBlock is a message's header section kept field-exact (own case, own
// order, folding preserved), so the server can add or replace one header
// (Message-ID, From, Date) without disturbing the rest of the bytes.
type headerBlock struct {
	fields []rawField
	nl     string // line ending the message uses: "\r\n" or "\n"
}

type rawField struct {
	name string // as written
	text string // whole field, "Name: value" with any folding, without the final newline
}

// value is the field's value, unfolded (each line break, CRLF or LF,
// removed) and trimmed. Most fields are on one line: they are only
// trimmed. (A strings.Replacer built per call took a fifth of parsing a
// message, and parsing the sandbox mailbox 15% of a sandbox server's start.)
func (f rawField) value() string {
	v := f.text[len(f.name)+1:]
	if strings.IndexByte(v, '\n') >= 0 {
		v = strings.ReplaceAll(strings.ReplaceAll(v, "\r\n", ""), "\n", "")
	}
	return strings.TrimSpace(v)
}

// splitMessage separates the header fields from the body. A line that is
// neither a field nor a continuation ends the headers (it belongs to the body).
func splitMessage(raw []byte) (headerBlock, []byte) {
	h := headerBlock{nl: "\r\n"}
	if i := bytes.IndexByte(raw, '\n'); i >= 0 && (i == 0 || raw[i-1] != '\r') {
		h.nl = "\n"
	}
	for pos := 0; pos < len(raw); {
		end := bytes.IndexByte(raw[pos:], '\n')
		next := len(raw)
		if end >= 0 {
			next = pos + end + 1
			end = pos + end
		} else {
			end = len(raw)
		}
		line := strings.TrimSuffix(string(raw[pos:end]), "\r")
		switch {
		case line == "":
			return h, raw[next:]
		case (line[0] == ' ' || line[0] == '\t') && len(h.fields) > 0:
			h.fields[len(h.fields)-1].text += h.nl + line
		default:
			colon := strings.IndexByte(line, ':')
			if colon <= 0 || !validFieldName(line[:colon]) {
				return h, raw[pos:]
			}
			h.fields = append(h.fields, rawField{name: line[:colon], text: line})
		}
		pos = next
	}
	return h, nil
}

func validFieldName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// get returns the first field named name (case-insensitively), unfolded.
func (h headerBlock) get(name string) string {
	for _, f := range h.fields {
		if strings.EqualFold(f.name, name) {
			return f.value()
		}
	}
	return ""
}

func (h headerBlock) has(name string) bool {
	for _, f := range h.fields {
		if strings.EqualFold(f.name, name) {
			return true
		}
	}
	return false
}

// set replaces the first field called name (keeping its position and
// spelling) and drops any others; absent, it is appended.
func (h *headerBlock) set(name, value string) {
	out := h.fields[:0:0]
	done := false
	for _, f := range h.fields {
		if !strings.EqualFold(f.name, name) {
			out = append(out, f)
			continue
		}
		if !done {
			out = append(out, rawField{name: f.name, text: f.name + ": " + value})
			done = true
		}
	}
	if !done {
		out = append(out, rawField{name: name, text: name + ": " + value})
	}
	h.fields = out
}

func (h *headerBlock) del(name string) {
	out := h.fields[:0:0]
	for _, f := range h.fields {
		if !strings.EqualFold(f.name, name) {
			out = append(out, f)
		}
	}
	h.fields = out
}

// assemble rebuilds the message bytes from the header block and body.
func (h headerBlock) assemble(body []byte) []byte {
	var b bytes.Buffer
	for _, f := range h.fields {
		b.WriteString(f.text)
		b.WriteString(h.nl)
	}
	b.WriteString(h.nl)
	b.Write(body)
	return b.Bytes()
}
