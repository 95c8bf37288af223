package agentmail

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Agents type search queries freely: plain words, "quoted phrases", mig*
// prefixes, AND/OR/NOT, parentheses, ticket ids like POL-358, and a fair
// amount of noise (a lone *, an unclosed quote, a dangling OR). FTS5 answers
// much of that with a syntax error. SanitizeQuery therefore parses the input
// leniently and re-emits it as an expression that FTS5 always accepts: every
// term and phrase quoted, operators only between operands, parentheses
// balanced. What it had to drop or repair is reported in notes.

const maxQueryTerms = 32

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
	column string // "subject" or "body_md" for a column filter
}

// SanitizeQuery returns an FTS5 MATCH expression for q ("" when nothing is
// searchable) and notes on what was changed.
func SanitizeQuery(q string) (string, []string) {
	toks, notes := lexQuery(q)
	p := &qparser{toks: toks}
	out := p.expr(0)
	notes = append(notes, p.notes...)
	if p.terms > maxQueryTerms {
		notes = append(notes, "only the first 32 terms were used")
	}
	return out, notes
}

var columnAliases = map[string]string{"subject": "subject", "body": "body_md", "body_md": "body_md"}

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
	column := ""
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
			toks = append(toks, qtok{kind: qPhrase, text: text, prefix: prefix, column: column})
			column = ""
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
			if name, rest, ok := strings.Cut(word, ":"); ok && columnAliases[strings.ToLower(name)] != "" {
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
				column = ""
				continue
			}
			toks = append(toks, qtok{kind: qTerm, text: trimmed, prefix: prefix, column: column})
			column = ""
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
func (p *qparser) expr(level int) string {
	if level == 3 {
		return p.primary()
	}
	left := p.expr(level + 1)
	for {
		t, ok := p.peek()
		if !ok || t.kind == qClose && p.depth > 0 {
			return left
		}
		var op string
		switch {
		case level == 0 && t.kind == qOr:
			op = "OR"
		case level == 1 && t.kind == qAnd:
			op = "AND"
		case level <= 1 && (t.kind == qTerm || t.kind == qPhrase || t.kind == qOpen):
			op = "AND" // implied (at level 0 only after a dropped ')')
		case level == 2 && t.kind == qNot:
			op = "NOT"
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
		if op != "AND" || t.kind == qAnd {
			p.pos++
		}
		right := p.expr(level + 1)
		switch {
		case right == "":
			if t.kind != qTerm && t.kind != qPhrase && t.kind != qOpen {
				p.notes = append(p.notes, "dropped a dangling "+op)
			}
		case left == "" && op == "NOT":
			// "NOT x" alone cannot be searched; answering x instead would
			// invert the question, so the clause goes.
			p.notes = append(p.notes, "dropped a leading NOT clause (FTS5 needs something to exclude from)")
		case left == "":
			if t.kind == qAnd || t.kind == qOr {
				p.notes = append(p.notes, "dropped a leading "+op)
			}
			left = right
		default:
			left = "(" + left + " " + op + " " + right + ")"
		}
	}
}

func (p *qparser) primary() string {
	for {
		t, ok := p.peek()
		if !ok {
			return ""
		}
		switch t.kind {
		case qTerm, qPhrase:
			p.pos++
			p.terms++
			if p.terms > maxQueryTerms {
				return ""
			}
			s := `"` + strings.ReplaceAll(strings.TrimSpace(t.text), `"`, `""`) + `"`
			if t.kind == qPhrase && !hasWordChar(t.text) {
				p.notes = append(p.notes, "dropped an empty phrase")
				return ""
			}
			if t.prefix {
				s += "*"
			}
			if t.column != "" {
				s = t.column + " : " + s
			}
			return s
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
				return ""
			}
			p.pos++
			p.notes = append(p.notes, "dropped an unbalanced ')'")
		default: // an operator where an operand belongs
			return ""
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
