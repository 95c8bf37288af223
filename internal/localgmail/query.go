package localgmail

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // Gmail dates are Los Angeles midnights; do not depend on the host's zoneinfo
)

// The messages.list `q` language, the subset of gmail-api.md §7. A query is
// lexed, parsed into a small tree of nodes, and evaluated per message against
// the token fields built at insert time. Gmail precedence: OR binds tighter
// than juxtaposition, so `a OR b c` is `(a OR b) AND c`. Nothing here may
// panic or reject input: text the parser cannot make sense of becomes plain
// words, as Gmail does.

type node interface {
	match(m *storedMsg, e *evalEnv) bool
	String() string
}

type evalEnv struct {
	owner     string
	labelNorm map[string]string // label id → normalized name, for label:
}

type query struct {
	root      node
	spamTrash bool // the query itself reaches into SPAM/TRASH (in:anywhere, in:spam, label:trash…)
}

// laZone is loaded on first use: reading the zone database at package
// initialisation cost every mailgate command a file read at start.
var laZone = sync.OnceValue(func() *time.Location {
	if l, err := time.LoadLocation("America/Los_Angeles"); err == nil {
		return l
	}
	return time.FixedZone("PST", -8*3600)
})

// ---- lexer ----

type qkind int

const (
	kWord qkind = iota
	kPhrase
	kField      // op:value or op:"quoted value"
	kFieldGroup // op:( … ) — the parenthesis is part of the token
	kLParen
	kRParen
	kLBrace
	kRBrace
	kMinus
	kOR
	kAND
)

type qtok struct {
	kind qkind
	op   string // for kField, kFieldGroup
	text string
}

var knownOps = map[string]bool{
	"from": true, "to": true, "cc": true, "bcc": true, "subject": true, "after": true, "before": true,
	"newer": true, "older": true, "newer_than": true, "older_than": true, "is": true, "in": true, "label": true,
	"has": true, "filename": true, "rfc822msgid": true, "larger": true, "smaller": true, "size": true, "category": true,
}

func isQSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func lexQuery(s string) []qtok {
	var out []qtok
	quoted := func(i int) (string, int) { // s[i] == '"'; an unclosed quote runs to the end
		j := strings.IndexByte(s[i+1:], '"')
		if j < 0 {
			return s[i+1:], len(s)
		}
		return s[i+1 : i+1+j], i + j + 2
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isQSpace(c):
			i++
		case c == '(' || c == ')' || c == '{' || c == '}':
			out = append(out, qtok{kind: map[byte]qkind{'(': kLParen, ')': kRParen, '{': kLBrace, '}': kRBrace}[c]})
			i++
		case c == '"':
			var t string
			t, i = quoted(i)
			out = append(out, qtok{kind: kPhrase, text: t})
		case (c == '-' || c == '+') && i+1 < len(s) && !isQSpace(s[i+1]) && s[i+1] != ')' && s[i+1] != '}':
			if c == '-' {
				out = append(out, qtok{kind: kMinus})
			} // '+' marks an exact word in Gmail; words are exact here anyway
			i++
		default:
			j := i
			for j < len(s) && !isQSpace(s[j]) && !strings.ContainsRune(`(){}"`, rune(s[j])) {
				j++
			}
			word := s[i:j]
			i = j
			if word == "OR" || word == "|" {
				out = append(out, qtok{kind: kOR})
				continue
			}
			if word == "AND" {
				out = append(out, qtok{kind: kAND})
				continue
			}
			op, val, ok := strings.Cut(word, ":")
			op = strings.ToLower(op)
			switch {
			case !ok || !knownOps[op]:
				out = append(out, qtok{kind: kWord, text: word})
			case val == "" && i < len(s) && s[i] == '"':
				val, i = quoted(i)
				out = append(out, qtok{kind: kField, op: op, text: val})
			case val == "" && i < len(s) && s[i] == '(':
				i++
				out = append(out, qtok{kind: kFieldGroup, op: op})
			case val == "":
				out = append(out, qtok{kind: kWord, text: word})
			default:
				out = append(out, qtok{kind: kField, op: op, text: val})
			}
		}
	}
	return out
}

// ---- parser ----

const maxQueryDepth = 100

type qparser struct {
	toks      []qtok
	pos       int
	depth     int // open ( and { being parsed
	now       time.Time
	spamTrash bool
}

func parseQuery(q string, now time.Time) *query {
	p := &qparser{toks: lexQuery(q), now: now}
	var items []node
	for p.pos < len(p.toks) { // top level: stray closers are skipped
		items = append(items, p.parseAnd(""))
		if p.pos < len(p.toks) {
			p.pos++
		}
	}
	return &query{root: mkAnd(items), spamTrash: p.spamTrash}
}

func (p *qparser) peek() *qtok {
	if p.pos < len(p.toks) {
		return &p.toks[p.pos]
	}
	return nil
}

// parseAnd reads juxtaposed terms up to the end or a closer. field, when set,
// is the operator of an enclosing op:( … ) applied to bare words.
func (p *qparser) parseAnd(field string) node {
	var items []node
	for {
		t := p.peek()
		if t == nil || t.kind == kRParen || t.kind == kRBrace {
			break
		}
		if t.kind == kAND || t.kind == kOR {
			p.pos++
			continue
		}
		items = append(items, p.parseOr(field))
	}
	return mkAnd(items)
}

func (p *qparser) parseOr(field string) node {
	alts := []node{p.parseUnary(field)}
	for t := p.peek(); t != nil && t.kind == kOR; t = p.peek() {
		p.pos++
		next := p.peek()
		if next == nil || next.kind == kRParen || next.kind == kRBrace || next.kind == kAND {
			break // a dangling OR
		}
		if next.kind == kOR {
			continue
		}
		alts = append(alts, p.parseUnary(field))
	}
	return mkOr(alts)
}

func (p *qparser) parseUnary(field string) node {
	neg := false
	for t := p.peek(); t != nil && t.kind == kMinus; t = p.peek() {
		neg = !neg
		p.pos++
	}
	if t := p.peek(); t == nil || t.kind == kRParen || t.kind == kRBrace || t.kind == kOR || t.kind == kAND {
		return allNode{} // a lone "-"
	}
	n := p.parsePrimary(field)
	if neg {
		return notNode{n}
	}
	return n
}

func (p *qparser) parsePrimary(field string) node {
	t := p.toks[p.pos]
	p.pos++
	switch t.kind {
	case kLParen, kFieldGroup:
		if t.kind == kFieldGroup {
			field = t.op
		}
		if p.depth >= maxQueryDepth {
			return allNode{}
		}
		p.depth++
		n := p.parseAnd(field)
		p.depth--
		if c := p.peek(); c != nil && c.kind == kRParen {
			p.pos++
		}
		return n
	case kLBrace:
		if p.depth >= maxQueryDepth {
			return allNode{}
		}
		p.depth++
		var alts []node
		for c := p.peek(); c != nil && c.kind != kRBrace && c.kind != kRParen; c = p.peek() {
			if c.kind == kOR || c.kind == kAND {
				p.pos++
				continue
			}
			alts = append(alts, p.parseUnary(field))
		}
		p.depth--
		if c := p.peek(); c != nil && c.kind == kRBrace {
			p.pos++
		}
		return mkOr(alts)
	case kPhrase, kWord:
		if field != "" {
			return p.fieldNode(field, t.text)
		}
		toks := tokenize(t.text)
		if len(toks) == 0 {
			return allNode{} // punctuation only: no constraint
		}
		return textNode{toks: toks, phrase: t.kind == kPhrase}
	case kField:
		return p.fieldNode(t.op, t.text)
	}
	return allNode{}
}

var (
	relRe  = lazyRegexp(`^([0-9]{1,6})([dmy])$`)
	sizeRe = lazyRegexp(`^([0-9]{1,15})([kKmM]?)$`)
	digits = lazyRegexp(`^[0-9]{1,15}$`)
)

func (p *qparser) fieldNode(op, val string) node {
	val = strings.TrimSpace(val)
	lv := strings.ToLower(val)
	asText := func() node { return textNode{toks: tokenize(op + " " + val)} }
	label := func(id string) node { return labelNode{id: id} }
	switch op {
	case "from", "to", "cc", "bcc":
		return addrNode{field: op, value: foldWord(lv), toks: tokenize(val)}
	case "subject":
		return subjectNode{toks: tokenize(val)}
	case "after", "newer", "before", "older":
		ms, ok := parseDateValue(val)
		if !ok {
			return asText()
		}
		return dateNode{before: op == "before" || op == "older", ms: ms}
	case "newer_than", "older_than":
		m := relRe().FindStringSubmatch(lv)
		if m == nil {
			return asText()
		}
		n, _ := strconv.Atoi(m[1])
		t := map[string]time.Time{"d": p.now.AddDate(0, 0, -n), "m": p.now.AddDate(0, -n, 0), "y": p.now.AddDate(-n, 0, 0)}[m[2]]
		return dateNode{before: op == "older_than", ms: t.UnixMilli()}
	case "is":
		switch lv {
		case "unread":
			return label("UNREAD")
		case "read":
			return notNode{label("UNREAD")}
		case "starred", "important":
			return label(strings.ToUpper(lv))
		}
		return noneNode{}
	case "in":
		switch lv {
		case "anywhere", "all":
			p.spamTrash = true
			return allNode{}
		case "spam", "trash", "bin":
			p.spamTrash = true
			return label(map[string]string{"spam": "SPAM", "trash": "TRASH", "bin": "TRASH"}[lv])
		case "inbox", "sent", "starred", "important", "unread":
			return label(strings.ToUpper(lv))
		case "drafts", "draft":
			return label("DRAFT")
		case "chats", "chat":
			return label("CHAT")
		}
		return labelNode{norm: normLabel(val)}
	case "label":
		n := normLabel(val)
		if n == "spam" || n == "trash" {
			p.spamTrash = true
		}
		return labelNode{norm: n}
	case "category":
		return label("CATEGORY_" + strings.ToUpper(val))
	case "has":
		if lv == "attachment" {
			return hasAttachmentNode{}
		}
		return noneNode{}
	case "filename":
		return filenameNode{value: foldWord(lv), toks: tokenize(val)}
	case "rfc822msgid":
		return msgIDNode{id: bareID(val)}
	case "larger", "smaller", "size":
		m := sizeRe().FindStringSubmatch(val)
		if m == nil {
			return asText()
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		n *= map[string]int64{"": 1, "k": 1 << 10, "m": 1 << 20}[strings.ToLower(m[2])]
		return sizeNode{op: op, n: n}
	}
	return asText()
}

// parseDateValue reads YYYY/MM/DD, YYYY-MM-DD (midnight in Los Angeles) or
// epoch seconds (exact).
func parseDateValue(v string) (int64, bool) {
	if digits().MatchString(v) {
		n, _ := strconv.ParseInt(v, 10, 64)
		return n * 1000, true
	}
	t, err := time.ParseInLocation("2006/1/2", strings.ReplaceAll(v, "-", "/"), laZone())
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

func normLabel(s string) string {
	return strings.NewReplacer(" ", "-", "/", "-").Replace(strings.ToLower(strings.TrimSpace(s)))
}

func mkAnd(all []node) node {
	var items []node
	for _, n := range all {
		if _, ok := n.(allNode); !ok { // "*" adds nothing to a conjunction
			items = append(items, n)
		}
	}
	return collapse(items, func(n []node) node { return andNode(n) })
}

func mkOr(items []node) node {
	for _, n := range items {
		if _, ok := n.(allNode); ok {
			return allNode{}
		}
	}
	return collapse(items, func(n []node) node { return orNode(n) })
}

// collapse joins items with join, except that none is "*" and one is itself.
func collapse(items []node, join func([]node) node) node {
	switch len(items) {
	case 0:
		return allNode{}
	case 1:
		return items[0]
	}
	return join(items)
}

// lazyRegexp compiles expr on first use, not at every mailgate start (this
// package is linked for the sandbox and the tests).
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
