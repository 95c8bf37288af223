package postgres

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Tsquery renders a parsed search (agentmail.ParseQuery) as the text of a
// PostgreSQL tsquery, for to_tsquery('simple', …):
//
//	term, "a phrase"     'term', 'a phrase'   (to_tsquery reads it as 'a' <-> 'phrase')
//	mig*                 'mig':*
//	subject:x, body:x    'x':A, 'x':B         (the subject is weight A in am_messages.fts)
//	x AND y, x OR y      (x & y), (x | y)
//	x NOT y              (x & !y)
//
// Each term stays one quoted operand and to_tsquery runs it through the
// same parser as to_tsvector ran the messages, so the query is tokenised
// and lower-cased exactly as the documents were: a term the parser splits
// ("POL-358", "build failed") becomes a phrase of its tokens, and a term it
// drops entirely (punctuation) leaves the expression as a stop word would.
//
// Any tree gives a syntactically valid tsquery, "" for nil: operand text is
// quoted and escaped, cleaned of what PostgreSQL text cannot hold (NUL),
// and bounded, as are the operands and the depth.
func Tsquery(q *agentmail.QueryNode) string {
	r := &tsRender{}
	var b strings.Builder
	r.node(q, 0).emit(&b)
	return b.String()
}

// Limits that keep any tree within what to_tsquery accepts cheaply.
const (
	maxOperands     = 64   // ParseQuery keeps 32 terms
	maxDepth        = 64   // nesting of operators followed
	maxOperandBytes = 4096 // a longer phrase is matched on its start
)

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

type tsRender struct{ operands int }

var tsOps = [...]tsOp{agentmail.QueryAnd: opAnd, agentmail.QueryOr: opOr, agentmail.QueryNot: opNot}

// node converts n, dropping what is over the limits.
func (r *tsRender) node(n *agentmail.QueryNode, depth int) *tsNode {
	if n == nil || depth > maxDepth {
		return nil
	}
	if n.Op == agentmail.QueryTerm {
		var w byte
		if int(n.Field) < len(fieldWeight) {
			w = fieldWeight[n.Field]
		}
		return r.term(n.Text, n.Prefix, w)
	}
	if int(n.Op) >= len(tsOps) {
		return nil
	}
	return both(tsOps[n.Op], r.node(n.Left, depth+1), r.node(n.Right, depth+1))
}

// fieldWeight is the weight a field's text has in am_messages.fts (0: any).
var fieldWeight = [...]byte{agentmail.FieldAny: 0, agentmail.FieldSubject: 'A', agentmail.FieldBody: 'B'}

// term makes an operand of text, or nothing when it holds nothing to
// search or the operand budget is spent.
func (r *tsRender) term(text string, prefix bool, weight byte) *tsNode {
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
	if r.operands++; r.operands > maxOperands {
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
