package agentmail

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Agents type search queries freely: plain words, "quoted phrases", mig*
// prefixes, AND/OR/NOT, parentheses, ticket ids like POL-358, and a fair
// amount of noise (a lone *, an unclosed quote, a dangling OR). ParseQuery
// reads the input once, leniently, into a tree that every engine can search
// as it is: every operand a term or phrase with something searchable in it,
// operators only between operands, at most maxQueryTerms terms. What it had
// to drop or repair is reported in notes. Each engine renders the tree in
// its own syntax (agentmail/sqlite: an FTS5 MATCH expression;
// agentmail/postgres: a tsquery); the tree's String is the query as
// understood, which search diagnostics show.

const maxQueryTerms = 32

// QueryOp is what a QueryNode is.
type QueryOp uint8

const (
	QueryTerm QueryOp = iota // a word or a phrase (Text)
	QueryAnd                 // Left and Right
	QueryOr                  // Left or Right
	QueryNot                 // Left and not Right
)

// QueryField is the part of a message a term is looked for in.
type QueryField uint8

const (
	FieldAny     QueryField = iota
	FieldSubject            // subject:term
	FieldBody               // body:term (or body_md:term)
)

// QueryNode is a parsed search: a term, or an operator over two non-nil
// nodes. A nil *QueryNode is the empty query (nothing searchable).
type QueryNode struct {
	Op          QueryOp
	Left, Right *QueryNode // the operands of QueryAnd, QueryOr and QueryNot
	// Text is a term's word or phrase as typed (trimmed, valid UTF-8, no
	// control characters, at least one letter or digit): the engine's
	// tokenizer splits a phrase into its words, as it split the messages.
	Text   string
	Prefix bool // match words starting with Text (mig*)
	Field  QueryField
}

// String is the query as understood, in the syntax search_messages reads
// (ParseQuery(n.String()) gives n back): terms quoted, field filters as
// subject:"…" and body:"…", every operator parenthesised. "" for nil.
func (n *QueryNode) String() string {
	if n == nil {
		return ""
	}
	if n.Op == QueryTerm {
		s := fieldPrefix[n.Field] + `"` + n.Text + `"`
		if n.Prefix {
			s += "*"
		}
		return s
	}
	return "(" + n.Left.String() + " " + opName[n.Op] + " " + n.Right.String() + ")"
}

var fieldPrefix = [...]string{FieldAny: "", FieldSubject: "subject:", FieldBody: "body:"}

// Terms returns the term nodes of n, left to right.
func (n *QueryNode) Terms() []*QueryNode {
	if n == nil {
		return nil
	}
	if n.Op == QueryTerm {
		return []*QueryNode{n}
	}
	return append(n.Left.Terms(), n.Right.Terms()...)
}

type qkind uint8

const (
	qTerm qkind = iota
	qPhrase
	qAnd
	qOr
	qNot
	qOpen
	qClose
)

type qtok struct {
	kind   qkind
	text   string
	prefix bool
	field  QueryField
}

// ParseQuery parses q into a tree (nil when nothing is searchable) and
// notes on what was changed.
func ParseQuery(q string) (*QueryNode, []string) {
	toks, notes := lexQuery(q)
	p := &qparser{toks: toks}
	out := p.expr(0)
	notes = append(notes, p.notes...)
	if p.terms > maxQueryTerms {
		notes = append(notes, "only the first 32 terms were used")
	}
	return out, notes
}

var columnAliases = map[string]QueryField{"subject": FieldSubject, "body": FieldBody, "body_md": FieldBody}

func lexQuery(q string) ([]qtok, []string) {
	var notes []string
	q = strings.ToValidUTF8(q, " ")
	q = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, q)
	var toks []qtok
	column := FieldAny
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ':
			i++
		case c == '(':
			toks = append(toks, qtok{kind: qOpen})
			i++
		case c == ')':
			toks = append(toks, qtok{kind: qClose})
			i++
		case c == '"':
			end := strings.IndexByte(q[i+1:], '"')
			var text string
			if end < 0 {
				text, i = q[i+1:], len(q)
				notes = append(notes, "closed an unterminated quote")
			} else {
				text, i = q[i+1:i+1+end], i+2+end
			}
			prefix := false
			if i < len(q) && q[i] == '*' {
				prefix, i = true, i+1
			}
			toks = append(toks, qtok{kind: qPhrase, text: text, prefix: prefix, field: column})
			column = FieldAny
		default:
			j := i
			for j < len(q) && !strings.ContainsRune(` ()"`, rune(q[j])) {
				j++
			}
			word := q[i:j]
			i = j
			switch word {
			case "AND":
				toks = append(toks, qtok{kind: qAnd})
				continue
			case "OR":
				toks = append(toks, qtok{kind: qOr})
				continue
			case "NOT":
				toks = append(toks, qtok{kind: qNot})
				continue
			}
			if name, rest, ok := strings.Cut(word, ":"); ok && columnAliases[strings.ToLower(name)] != FieldAny {
				col := columnAliases[strings.ToLower(name)]
				if rest == "" {
					column = col // "subject: foo" or subject:"a phrase"
					continue
				}
				word, column = rest, col
			}
			prefix := strings.HasSuffix(word, "*")
			trimmed := strings.Trim(word, "*")
			if trimmed != word && strings.HasPrefix(word, "*") {
				notes = append(notes, "dropped a leading wildcard (FTS5 matches prefixes only)")
			}
			if !hasWordChar(trimmed) {
				if word != "" {
					notes = append(notes, "dropped "+quoteNote(word)+" (nothing searchable in it)")
				}
				column = FieldAny
				continue
			}
			toks = append(toks, qtok{kind: qTerm, text: trimmed, prefix: prefix, field: column})
			column = FieldAny
		}
	}
	return toks, notes
}

func quoteNote(s string) string {
	if len(s) > 20 {
		s = s[:20] + "…"
	}
	return "'" + s + "'"
}

func hasWordChar(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// qparser is a forgiving recursive-descent parser over the precedence
// levels OR < AND (explicit or implied) < NOT.
type qparser struct {
	toks  []qtok
	pos   int
	depth int
	terms int
	notes []string
}

func (p *qparser) peek() (qtok, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return qtok{}, false
}

// expr parses at level 0 = OR, 1 = AND, 2 = NOT, 3 = primary.
func (p *qparser) expr(level int) *QueryNode {
	if level == 3 {
		return p.primary()
	}
	left := p.expr(level + 1)
	for {
		t, ok := p.peek()
		if !ok || t.kind == qClose && p.depth > 0 {
			return left
		}
		var op QueryOp
		switch {
		case level == 0 && t.kind == qOr:
			op = QueryOr
		case level == 1 && t.kind == qAnd:
			op = QueryAnd
		case level <= 1 && (t.kind == qTerm || t.kind == qPhrase || t.kind == qOpen):
			op = QueryAnd // implied (at level 0 only after a dropped ')')
		case level == 2 && t.kind == qNot:
			op = QueryNot
		case level == 0 && t.kind == qClose: // unbalanced ")"
			p.pos++
			p.notes = append(p.notes, "dropped an unbalanced ')'")
			continue
		case level == 0: // a stray operator where an operand belongs
			p.pos++
			p.notes = append(p.notes, "dropped a misplaced operator")
			continue
		default:
			return left
		}
		if op != QueryAnd || t.kind == qAnd {
			p.pos++
		}
		right := p.expr(level + 1)
		switch {
		case right == nil:
			if t.kind != qTerm && t.kind != qPhrase && t.kind != qOpen {
				p.notes = append(p.notes, "dropped a dangling "+opName[op])
			}
		case left == nil && op == QueryNot:
			// "NOT x" alone cannot be searched; answering x instead would
			// invert the question, so the clause goes.
			p.notes = append(p.notes, "dropped a leading NOT clause (FTS5 needs something to exclude from)")
		case left == nil:
			if t.kind == qAnd || t.kind == qOr {
				p.notes = append(p.notes, "dropped a leading "+opName[op])
			}
			left = right
		default:
			left = &QueryNode{Op: op, Left: left, Right: right}
		}
	}
}

var opName = [...]string{QueryAnd: "AND", QueryOr: "OR", QueryNot: "NOT"}

func (p *qparser) primary() *QueryNode {
	for {
		t, ok := p.peek()
		if !ok {
			return nil
		}
		switch t.kind {
		case qTerm, qPhrase:
			p.pos++
			p.terms++
			if p.terms > maxQueryTerms {
				return nil
			}
			if t.kind == qPhrase && !hasWordChar(t.text) {
				p.notes = append(p.notes, "dropped an empty phrase")
				return nil
			}
			return &QueryNode{Op: QueryTerm, Text: strings.TrimSpace(t.text), Prefix: t.prefix, Field: t.field}
		case qOpen:
			p.pos++
			p.depth++
			inner := p.expr(0)
			p.depth--
			if t, ok := p.peek(); ok && t.kind == qClose {
				p.pos++
			} else {
				p.notes = append(p.notes, "closed an unbalanced '('")
			}
			return inner
		case qClose:
			if p.depth > 0 {
				return nil
			}
			p.pos++
			p.notes = append(p.notes, "dropped an unbalanced ')'")
		default: // an operator where an operand belongs
			return nil
		}
	}
}

// stopwords are left out of the LIKE fallback, which can only AND terms.
var stopwords = map[string]bool{"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "in": true, "is": true, "it": true, "of": true, "on": true, "or": true, "not": true, "the": true,
	"to": true, "with": true, "this": true, "that": true}

// LikeTerms extracts up to five plain words of q for the LIKE fallback.
func LikeTerms(q string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' }) {
		if stopwords[strings.ToLower(f)] || !hasWordChar(f) {
			continue
		}
		out = append(out, f)
		if len(out) == 5 {
			break
		}
	}
	return out
}
