package sqlite

import (
	"context"
	"strings"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amsql"
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

// Prefixes up to maxIndexedPrefix characters have an index of their own
// (migrations/0008_fts_prefix.sql), which FTS5 reads lazily, newest first.
// A longer one FTS5 answers by gathering the whole posting list of every
// word it names from every segment before the first row (100 ms and more
// for migra* at a million messages); so expandPrefixes names those words
// from the index's word list and asks for them, ORed, instead: the same
// messages, read as words are. A prefix naming more than maxExpansion
// words, or none, or not plain ASCII letters and digits (whose folding
// only FTS5 knows), is left to FTS5.
const (
	maxIndexedPrefix = 4
	maxExpansion     = 32
)

// expandPrefixes returns n with each long prefix term replaced by the OR of
// the indexed words it names (n itself when there is none).
func (t *tx) expandPrefixes(ctx context.Context, n *agentmail.QueryNode) (*agentmail.QueryNode, error) {
	if n == nil {
		return nil, nil
	}
	if n.Op != agentmail.QueryTerm {
		l, err := t.expandPrefixes(ctx, n.Left)
		if err != nil {
			return nil, err
		}
		r, err := t.expandPrefixes(ctx, n.Right)
		if err != nil || (l == n.Left && r == n.Right) {
			return n, err
		}
		return &agentmail.QueryNode{Op: n.Op, Left: l, Right: r}, nil
	}
	if !n.Prefix || len(n.Text) <= maxIndexedPrefix || !plainASCII(n.Text) {
		return n, nil
	}
	lo := strings.ToLower(n.Text)
	hi := lo[:len(lo)-1] + string(lo[len(lo)-1]+1)
	rows, err := t.query(ctx, `SELECT term FROM am_fts_terms WHERE term >= ?1 AND term < ?2
		UNION SELECT term FROM am_fts_batch_terms WHERE term >= ?1 AND term < ?2
		ORDER BY 1 LIMIT ?3`, lo, hi, maxExpansion+1)
	if err != nil {
		return nil, err
	}
	words, err := amsql.Collect(rows, func(row amsql.Row) (w string, err error) { return w, row.Scan(&w) })
	if err != nil || len(words) == 0 || len(words) > maxExpansion {
		return n, err
	}
	var out *agentmail.QueryNode
	for _, w := range words {
		term := &agentmail.QueryNode{Op: agentmail.QueryTerm, Text: w, Field: n.Field}
		if out == nil {
			out = term
		} else {
			out = &agentmail.QueryNode{Op: agentmail.QueryOr, Left: out, Right: term}
		}
	}
	return out, nil
}

// plainASCII reports whether s is ASCII letters and digits only: one FTS5
// token, whose folding is lower case.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
