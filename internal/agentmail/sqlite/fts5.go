package sqlite

import (
	"strings"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// FTS5 renders a parsed search (agentmail.ParseQuery) as an FTS5 MATCH
// expression over am_messages_fts: every term a quoted string (so no word
// of it is read as FTS5 syntax: NEAR, a column name, '^'), a prefix term
// "mig"*, a field filter the column's name, every operator parenthesised.
// FTS5's tokenizer then splits a phrase, or a term like POL-358, into the
// words it indexed. nil gives "" (nothing to search).
func FTS5(n *agentmail.QueryNode) string {
	var b strings.Builder
	writeFTS5(&b, n)
	return b.String()
}

func writeFTS5(b *strings.Builder, n *agentmail.QueryNode) {
	if n == nil {
		return
	}
	if n.Op == agentmail.QueryTerm {
		switch n.Field {
		case agentmail.FieldSubject:
			b.WriteString("subject : ")
		case agentmail.FieldBody:
			b.WriteString("body_md : ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(n.Text, `"`, `""`))
		b.WriteByte('"')
		if n.Prefix {
			b.WriteByte('*')
		}
		return
	}
	b.WriteByte('(')
	writeFTS5(b, n.Left)
	switch n.Op {
	case agentmail.QueryAnd:
		b.WriteString(" AND ")
	case agentmail.QueryOr:
		b.WriteString(" OR ")
	case agentmail.QueryNot:
		b.WriteString(" NOT ")
	}
	writeFTS5(b, n.Right)
	b.WriteByte(')')
}
