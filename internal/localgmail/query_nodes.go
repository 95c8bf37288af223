package localgmail

import (
	"fmt"
	"strings"
	"time"
)

// The nodes a parsed query is made of, each evaluated against the fields
// parseMessage pre-computed, and printable for tests and debugging.

type (
	andNode  []node
	orNode   []node
	notNode  struct{ n node }
	allNode  struct{}
	noneNode struct{}
	textNode struct {
		toks   []string
		phrase bool
	}
	addrNode struct {
		field, value string
		toks         []string
	}
	subjectNode struct{ toks []string }
	labelNode   struct{ id, norm string }
	dateNode    struct {
		before bool
		ms     int64
	}
	sizeNode struct {
		op string
		n  int64
	}
	hasAttachmentNode struct{}
	filenameNode      struct {
		value string
		toks  []string
	}
	msgIDNode struct{ id string }
)

func (n andNode) match(m *storedMsg, e *evalEnv) bool {
	for _, c := range n {
		if !c.match(m, e) {
			return false
		}
	}
	return true
}

func (n orNode) match(m *storedMsg, e *evalEnv) bool {
	for _, c := range n {
		if c.match(m, e) {
			return true
		}
	}
	return false
}

func (n notNode) match(m *storedMsg, e *evalEnv) bool { return !n.n.match(m, e) }
func (allNode) match(*storedMsg, *evalEnv) bool       { return true }
func (noneNode) match(*storedMsg, *evalEnv) bool      { return false }

func (n textNode) match(m *storedMsg, _ *evalEnv) bool {
	p := m.p.get()
	switch len(n.toks) {
	case 0:
		return true
	case 1:
		_, ok := p.all[n.toks[0]]
		return ok
	}
	for _, f := range []tokenField{p.subjF, p.bodyF, p.fileF, p.from.tokenField, p.to.tokenField, p.cc.tokenField, p.bcc.tokenField} {
		if f.has(n.toks) {
			return true
		}
	}
	return false
}

func (n addrNode) match(m *storedMsg, e *evalEnv) bool {
	p := m.p.get()
	f := map[string]addrField{"from": p.from, "to": p.to, "cc": p.cc, "bcc": p.bcc}[n.field]
	v := n.value
	if v == "me" {
		v = strings.ToLower(e.owner)
	}
	for _, a := range f.addrs {
		if a.email == v || a.local == v || a.domain == v || strings.HasSuffix(a.domain, "."+v) ||
			(strings.HasPrefix(v, "@") && strings.HasSuffix(a.email, v)) {
			return true
		}
	}
	return len(n.toks) > 0 && n.value != "me" && f.has(n.toks)
}

func (n subjectNode) match(m *storedMsg, _ *evalEnv) bool { return m.p.get().subjF.has(n.toks) }

func (n labelNode) match(m *storedMsg, e *evalEnv) bool {
	for _, l := range m.labels {
		if l == n.id || (n.id == "" && e.labelNorm[l] == n.norm) {
			return true
		}
	}
	return false
}

func (n dateNode) match(m *storedMsg, _ *evalEnv) bool {
	if n.before {
		return m.internalDate < n.ms
	}
	return m.internalDate >= n.ms
}

func (n sizeNode) match(m *storedMsg, _ *evalEnv) bool {
	size := int64(len(m.raw))
	switch n.op {
	case "smaller":
		return size < n.n
	case "larger":
		return size > n.n
	}
	return size >= n.n // size: is "larger than or equal"
}

func (hasAttachmentNode) match(m *storedMsg, _ *evalEnv) bool { return len(m.p.get().filenames) > 0 }

func (n filenameNode) match(m *storedMsg, _ *evalEnv) bool {
	for _, f := range m.p.get().filenames {
		lf := foldWord(f)
		if lf == n.value || strings.HasSuffix(lf, "."+n.value) {
			return true
		}
	}
	return len(n.toks) > 0 && m.p.get().fileF.has(n.toks)
}

func (n msgIDNode) match(m *storedMsg, _ *evalEnv) bool {
	return n.id != "" && m.p.messageID == n.id
}

func joinNodes(name string, ns []node) string {
	parts := []string{name}
	for _, n := range ns {
		parts = append(parts, n.String())
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func (n andNode) String() string  { return joinNodes("and", n) }
func (n orNode) String() string   { return joinNodes("or", n) }
func (n notNode) String() string  { return "-" + n.n.String() }
func (allNode) String() string    { return "*" }
func (noneNode) String() string   { return "!" }
func (n textNode) String() string { return fmt.Sprintf("%q", strings.Join(n.toks, " ")) }
func (n addrNode) String() string { return n.field + ":" + n.value }
func (n subjectNode) String() string {
	return fmt.Sprintf("subject:%q", strings.Join(n.toks, " "))
}
func (n labelNode) String() string {
	if n.id != "" {
		return "label:" + n.id
	}
	return "label:" + n.norm
}
func (n dateNode) String() string {
	return map[bool]string{true: "before:", false: "after:"}[n.before] + time.UnixMilli(n.ms).UTC().Format(time.RFC3339)
}
func (n sizeNode) String() string        { return fmt.Sprintf("%s:%d", n.op, n.n) }
func (hasAttachmentNode) String() string { return "has:attachment" }
func (n filenameNode) String() string    { return "filename:" + n.value }
func (n msgIDNode) String() string       { return "rfc822msgid:" + n.id }
