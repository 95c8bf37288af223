package postgres

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/store/storetest"
)

// TestTsquery renders what agents type, parsed by agentmail.ParseQuery.
func TestTsquery(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{``, ``},
		{`Hello`, `'Hello'`},
		{`hello world`, `('hello' & 'world')`},
		{`"build failed"`, `'build failed'`},
		{`mig*`, `'mig':*`},
		{`a OR b`, `('a' | 'b')`},
		{`a AND b OR c`, `(('a' & 'b') | 'c')`},
		{`a NOT b`, `('a' & !'b')`},
		{`a NOT (b OR c)`, `('a' & !('b' | 'c'))`},
		{`POL-358`, `'POL-358'`},
		{`subject:deploy`, `'deploy':A`},
		{`body:x*`, `'x':*B`},
		{`subject:"a b" body_md:c`, `('a b':A & 'c':B)`},
		{`"O'Brien \ x"`, `'O''Brien \\ x'`},
		{`NOT b`, ``},
		{`a AND`, `'a'`},
		{`) a (`, `'a'`},
		{`"" AND "  "`, ``},
		{"\"a\x00b\"", `'a b'`},
	}
	for _, c := range cases {
		tree, _ := agentmail.ParseQuery(c.in)
		if got := Tsquery(tree); got != c.want {
			t.Errorf("Tsquery(ParseQuery(%q)) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestTsqueryLimits: trees no parse gives (the renderer takes any tree)
// stay within the limits.
func TestTsqueryLimits(t *testing.T) {
	t.Parallel()
	term := func(text string, prefix bool) *agentmail.QueryNode {
		return &agentmail.QueryNode{Op: agentmail.QueryTerm, Text: text, Prefix: prefix}
	}
	long := strings.Repeat("word ", 2000)
	got := Tsquery(term(long, true))
	if len(got) > maxOperandBytes+8 || strings.HasSuffix(got, ":*") {
		t.Errorf("a long phrase is not cut: %d bytes, %q…", len(got), got[len(got)-20:])
	}
	many := term("t", false)
	for range 500 {
		many = &agentmail.QueryNode{Op: agentmail.QueryAnd, Left: many, Right: term("t", false)}
	}
	if n := strings.Count(Tsquery(many), "'t'"); n != maxDepth {
		t.Errorf("%d operands kept of a 500-deep tree, want %d", n, maxDepth)
	}
	wide := term("t", false)
	for range 7 { // 128 operands, depth 7
		wide = &agentmail.QueryNode{Op: agentmail.QueryOr, Left: wide, Right: wide}
	}
	q := Tsquery(wide)
	if n := strings.Count(q, "'t'"); n != maxOperands {
		t.Errorf("%d operands kept, want %d", n, maxOperands)
	}
	checkTsquery(t, "wide", q)
	if got := Tsquery(term("a\x00b\n", false)); got != `'a b'` {
		t.Errorf("NUL and control characters: %q", got)
	}
	if got := Tsquery(&agentmail.QueryNode{Op: agentmail.QueryNot, Left: nil, Right: term("x", false)}); got != "" {
		t.Errorf("NOT with nothing to exclude from: %q", got)
	}
}

// checkTsquery verifies what the tsquery lexer needs: quotes terminated,
// parentheses balanced, operators between operands.
func checkTsquery(t *testing.T, in, q string) {
	t.Helper()
	depth, operand := 0, false
	for i := 0; i < len(q); i++ {
		switch c := q[i]; c {
		case '\'':
			if operand {
				t.Fatalf("Tsquery(%q) = %q: two operands in a row", in, q)
			}
			j := i + 1
			for ; j < len(q); j++ {
				if q[j] == '\\' {
					j++
				} else if q[j] == '\'' {
					if j+1 < len(q) && q[j+1] == '\'' {
						j++
						continue
					}
					break
				}
			}
			if j >= len(q) {
				t.Fatalf("Tsquery(%q) = %q: unterminated quote", in, q)
			}
			i, operand = j, true
			for i+1 < len(q) && strings.IndexByte(":*AB", q[i+1]) >= 0 {
				i++
			}
		case '(':
			if operand {
				t.Fatalf("Tsquery(%q) = %q: two operands in a row", in, q)
			}
			depth++
		case ')':
			if depth--; depth < 0 || !operand {
				t.Fatalf("Tsquery(%q) = %q: unbalanced or empty ')'", in, q)
			}
		case '&', '|':
			if !operand {
				t.Fatalf("Tsquery(%q) = %q: operator without left operand", in, q)
			}
			operand = false
		case ' ', '!':
		default:
			t.Fatalf("Tsquery(%q) = %q: stray %q at %d", in, q, c, i)
		}
	}
	if depth != 0 {
		t.Fatalf("Tsquery(%q) = %q: unbalanced '('", in, q)
	}
}

var tsquerySeeds = []string{"", "Hello", `"a b" OR c*`, "NOT", "((a", `"`, "a:b", "subject:", "NEAR(a b, 2)", "*", "a AND NOT b",
	"col:x OR", "^a", "a + b", "\x00", "\xff\xfe", "{a b}: c", "é*", "a\"b", "-x", "AND OR NOT", ") (", "subject:\"x y\"*",
	`O'Brien`, `back\slash`, `'quoted'`, "it's", `"a''b"`, "a & b | !c", "a <-> b", "x:*A", "body:\"é ü\"* NOT subject:z"}

// FuzzTsquery: for any input, the rendering of its parse does not panic,
// is well formed, and is empty exactly when the parse is. (FuzzSearchQuery,
// in agentmail, checks that FTS5's rendering agrees.)
func FuzzTsquery(f *testing.F) {
	for _, s := range tsquerySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tree, _ := agentmail.ParseQuery(s)
		q := Tsquery(tree)
		if (tree == nil) != (q == "") {
			t.Fatalf("Tsquery(ParseQuery(%q) = %s) = %q", s, tree, q)
		}
		checkTsquery(t, s, q)
	})
}

// oddQueries returns inputs an agent might type, and worse: the fuzz seeds
// and random strings from pieces that trouble query parsers.
func oddQueries(n int) []string {
	pieces := []string{"a", "B", "deploy", "POL-358", "é", "ü", "日本", " ", " ", "  ", `"`, `""`, "'", "''", `\`, "*", ":", "(", ")", "AND", "OR", "NOT",
		"and", "subject:", "body:", "body_md:", "subject", "!", "&", "|", "<->", "<2>", "-", "+", "^", "{", "}", ".", ",", "@", "a@b.com",
		"3.14", "-42", "x:*A", "\x00", "\t", "\n", "\xff", "🙂", "https://x.y/z?q=1", "/usr/lib", strings.Repeat("z", 2100), "NEAR", "%", "_"}
	r := rand.New(rand.NewPCG(1, 2))
	out := append([]string{}, tsquerySeeds...)
	for len(out) < n {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestTsqueryAcceptedByPostgres runs the translation of a few hundred odd
// queries through to_tsquery and the search statement's guard on the test
// database: none may fail.
func TestTsqueryAcceptedByPostgres(t *testing.T) {
	t.Parallel()
	if storetest.PostgresURL() == "" {
		t.Skip("needs PostgreSQL (" + storetest.EnvPostgres + ")")
	}
	db := storetest.Open(t)
	ctx := context.Background()
	stmt, err := db.PrepareContext(ctx, `SELECT to_tsvector('pg_catalog.simple', 'a deploy POL-358 é 3.14') @@ q AND querytree(q) <> 'T'
		FROM to_tsquery('pg_catalog.simple', $1) AS q(q)`)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	inputs := oddQueries(400)
	inputs = append(inputs, `"`+strings.Repeat("a ", 5000)+`"`, strings.Repeat(`"x y z" OR `, 40), strings.Repeat("(", 300)+"a"+strings.Repeat(")", 300))
	for _, in := range inputs {
		tree, _ := agentmail.ParseQuery(in)
		q := Tsquery(tree)
		if q == "" {
			continue
		}
		var ok bool
		if err := stmt.QueryRowContext(ctx, q).Scan(&ok); err != nil {
			t.Errorf("ParseQuery(%q) = %s → %q: PostgreSQL refuses it: %v", in, tree, q, err)
		}
	}
}
