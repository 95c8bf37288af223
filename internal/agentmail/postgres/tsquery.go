package postgres

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tsquery translates a full-text expression in the canonical FTS5 form that
// agentmail.SanitizeQuery emits into the text of a PostgreSQL tsquery, for
// to_tsquery('simple', …):
//
//	"term"               'term'
//	"a b" (a phrase)     'a b'        (to_tsquery reads it as 'a' <-> 'b')
//	"foo"*               'foo':*
//	subject : "x"        'x':A        (the subject is weight A in am_messages.fts)
//	body_md : "x"        'x':B
//	x AND y, x OR y      (x & y), (x | y)
//	x NOT y              (x & !y)
//
// Each term stays one quoted operand and to_tsquery runs it through the
// same parser as to_tsvector ran the messages, so the query is tokenised
// and lower-cased exactly as the documents were: a term the parser splits
// ("POL-358", "build failed") becomes a phrase of its tokens, and a term it
// drops entirely (punctuation) leaves the expression as a stop word would.
//
// Any input gives a syntactically valid tsquery or "" (nothing to search):
// the translator parses leniently (FTS5 precedence: NOT over AND over OR,
// adjacent operands ANDed), drops what does not fit, and re-emits the tree
// fully parenthesised, so a Match that SanitizeQuery produced never makes
// the search statement fail.
func Tsquery(match string) string {
	p := &tsParser{toks: lexMatch(match)}
	n := p.or()
	for p.pos < len(p.toks) { // stray ')' or operators: skip and go on
		p.pos++
		if r := p.or(); r != nil {
			n = both(opAnd, n, r)
		}
	}
	var b strings.Builder
	n.emit(&b)
	return b.String()
}

// Limits that keep any input within what to_tsquery accepts cheaply.
const (
	maxOperands     = 64   // SanitizeQuery keeps 32 terms
	maxDepth        = 64   // nesting of parentheses followed
	maxOperandBytes = 4096 // a longer phrase is matched on its start
)

type tsTokKind uint8

const (
	tkWord  tsTokKind = iota // a bare word (operators and column names)
	tkQuote                  // a quoted string: a term or a phrase
	tkOpen
	tkClose
	tkColon
)

type tsTok struct {
	kind   tsTokKind
	text   string
	prefix bool // a '*' right after the closing quote
}

// lexMatch splits an FTS5 expression into tokens. Inside quotes "" is a
// literal quote; an unterminated quote runs to the end.
func lexMatch(s string) []tsTok {
	var toks []tsTok
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case r == '(':
			toks = append(toks, tsTok{kind: tkOpen})
			i++
		case r == ')':
			toks = append(toks, tsTok{kind: tkClose})
			i++
		case r == ':':
			toks = append(toks, tsTok{kind: tkColon})
			i++
		case r == '"':
			var text strings.Builder
			j := i + 1
			for j < len(s) {
				if s[j] == '"' {
					if j+1 < len(s) && s[j+1] == '"' {
						text.WriteByte('"')
						j += 2
						continue
					}
					j++
					break
				}
				text.WriteByte(s[j])
				j++
			}
			t := tsTok{kind: tkQuote, text: text.String()}
			if j < len(s) && s[j] == '*' {
				t.prefix = true
				j++
			}
			toks = append(toks, t)
			i = j
		default:
			j := i
			for j < len(s) {
				r, size := utf8.DecodeRuneInString(s[j:])
				if unicode.IsSpace(r) || strings.ContainsRune(`()":`, r) {
					break
				}
				j += size
			}
			toks = append(toks, tsTok{kind: tkWord, text: s[i:j]})
			i = j
		}
	}
	return toks
}

type tsOp uint8

const (
	opTerm tsOp = iota
	opAnd
	opOr
	opNot // left AND NOT right
)

// tsNode is a parsed expression; nil is the empty expression.
type tsNode struct {
	op          tsOp
	left, right *tsNode
	text        string // opTerm
	prefix      bool
	weight      byte // 'A', 'B' or 0
}

// both combines two expressions, either of which may be empty.
func both(op tsOp, l, r *tsNode) *tsNode {
	switch {
	case r == nil:
		return l
	case l == nil:
		if op == opNot {
			return nil // nothing to exclude from: the clause goes
		}
		return r
	}
	return &tsNode{op: op, left: l, right: r}
}

type tsParser struct {
	toks     []tsTok
	pos      int
	depth    int
	operands int
}

func (p *tsParser) peek() (tsTok, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return tsTok{}, false
}

func (p *tsParser) isWord(w string) bool {
	t, ok := p.peek()
	return ok && t.kind == tkWord && t.text == w
}

// startsOperand reports whether the next token can begin an operand (so
// that two adjacent operands are ANDed).
func (p *tsParser) startsOperand() bool {
	t, ok := p.peek()
	if !ok {
		return false
	}
	switch t.kind {
	case tkQuote, tkOpen:
		return true
	case tkWord:
		return t.text != "AND" && t.text != "OR" && t.text != "NOT"
	}
	return false
}

func (p *tsParser) or() *tsNode {
	n := p.and()
	for p.isWord("OR") {
		p.pos++
		n = both(opOr, n, p.and())
	}
	return n
}

func (p *tsParser) and() *tsNode {
	n := p.not()
	for {
		switch {
		case p.isWord("AND"):
			p.pos++
		case p.startsOperand():
		default:
			return n
		}
		n = both(opAnd, n, p.not())
	}
}

func (p *tsParser) not() *tsNode {
	n := p.primary(0)
	for p.isWord("NOT") {
		p.pos++
		n = both(opNot, n, p.primary(0))
	}
	return n
}

// primary parses one operand: a group, a column filter, or a term. weight
// is the column filter in force (0 for none).
func (p *tsParser) primary(weight byte) *tsNode {
	t, ok := p.peek()
	if !ok {
		return nil
	}
	switch t.kind {
	case tkOpen:
		p.pos++
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxDepth {
			return nil
		}
		n := p.or()
		if t, ok := p.peek(); ok && t.kind == tkClose {
			p.pos++
		}
		return withWeight(n, weight)
	case tkWord:
		if w := columnWeight(t.text); w != 0 && p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == tkColon {
			p.pos += 2
			return p.primary(w)
		}
		if t.text == "AND" || t.text == "OR" || t.text == "NOT" {
			return nil // an operator where an operand belongs: the caller drops it
		}
		// A bare word (not in SanitizeQuery's output): a term, with a
		// trailing '*' as prefix.
		p.pos++
		return p.term(strings.TrimRight(t.text, "*"), strings.HasSuffix(t.text, "*"), weight)
	case tkQuote:
		p.pos++
		return p.term(t.text, t.prefix, weight)
	default: // ':' or ')' where an operand belongs
		p.pos++
		return nil
	}
}

func columnWeight(name string) byte {
	switch name {
	case "subject":
		return 'A'
	case "body_md":
		return 'B'
	}
	return 0
}

func withWeight(n *tsNode, w byte) *tsNode {
	if n == nil || w == 0 {
		return n
	}
	if n.op == opTerm {
		if n.weight == 0 {
			n.weight = w
		}
		return n
	}
	withWeight(n.left, w)
	withWeight(n.right, w)
	return n
}

// term makes an operand of text, or nothing when it holds nothing to
// search or the operand budget is spent.
func (p *tsParser) term(text string, prefix bool, weight byte) *tsNode {
	text = strings.ToValidUTF8(text, " ")
	text = strings.Map(func(r rune) rune {
		if r == 0 || unicode.IsControl(r) {
			return ' ' // PostgreSQL text cannot hold NUL
		}
		return r
	}, text)
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	if p.operands++; p.operands > maxOperands {
		return nil
	}
	if len(text) > maxOperandBytes {
		text = cutText(text, maxOperandBytes)
		prefix = false // the cut word is not what was typed
	}
	return &tsNode{op: opTerm, text: text, prefix: prefix, weight: weight}
}

// cutText shortens s to at most n bytes, at a space when there is one in
// the second half (so no word is cut), else at a rune boundary.
func cutText(s string, n int) string {
	s = s[:n]
	if i := strings.LastIndexFunc(s, unicode.IsSpace); i >= n/2 {
		return s[:i]
	}
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// tsEscaper quotes operand text for the tsquery lexer: inside '…' a quote
// is doubled and a backslash escapes the next character.
var tsEscaper = strings.NewReplacer(`'`, `''`, `\`, `\\`)

func (n *tsNode) emit(b *strings.Builder) {
	if n == nil {
		return
	}
	switch n.op {
	case opTerm:
		b.WriteByte('\'')
		tsEscaper.WriteString(b, n.text)
		b.WriteByte('\'')
		if n.prefix || n.weight != 0 {
			b.WriteByte(':')
			if n.prefix {
				b.WriteByte('*')
			}
			if n.weight != 0 {
				b.WriteByte(n.weight)
			}
		}
		return
	}
	b.WriteByte('(')
	n.left.emit(b)
	switch n.op {
	case opAnd:
		b.WriteString(" & ")
	case opOr:
		b.WriteString(" | ")
	case opNot:
		b.WriteString(" & !")
	}
	n.right.emit(b)
	b.WriteByte(')')
}
