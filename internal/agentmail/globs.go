package agentmail

import (
	"strings"
	"sync"
	"sync/atomic"
)

// File reservations name paths with gitignore-style globs relative to the
// project root: "src/main.py", "tests/*.py", "apps/web/**", "*.md".
//
//   - "*" and "?" match within one path segment, "[a-z]" / "[!a-z]" one
//     character of a class, and "**" any number of whole segments.
//   - A pattern naming a directory also covers its contents ("src" and
//     "src/" cover "src/app.py"; so does "src/*" for "src/a/b.py"). A
//     literal name with an extension ("main.py") is taken to be a file.
//   - A pattern without "/" that contains a wildcard matches at any depth,
//     as in .gitignore ("*.py" covers "lib/x.py"); a bare name without
//     wildcards ("Makefile", "src") names the entry at the project root.
//   - Leading "./" and "/" are dropped; "\" is read as "/".
//   - Patterns with a scheme ("tool://build", "resource://x") match
//     exactly and only themselves.
//
// Two reservations conflict when their patterns overlap: when some path is
// covered by both. That is decided on the patterns themselves (intersection
// of the two languages), so it works in both directions and for glob against
// glob ("src/**" vs "src/*.py", "*.py" vs "lib/**"), not only when one
// pattern happens to match the other's text.

// NormalizePattern cleans a requested path: project-absolute paths under
// root become relative, "\" becomes "/", and "./" and doubled slashes go.
func NormalizePattern(p, root string) string {
	p = strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")
	if strings.Contains(p, "://") {
		return p
	}
	if root != "" && root != "/" {
		if rest, ok := strings.CutPrefix(p, strings.TrimRight(root, "/")+"/"); ok {
			p = rest
		} else if p == root {
			p = "**"
		}
	}
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	for {
		switch {
		case strings.HasPrefix(p, "./"):
			p = p[2:]
		case strings.HasPrefix(p, "/"):
			p = p[1:]
		default:
			if p == "" || p == "." {
				return "**"
			}
			return p
		}
	}
}

// Pattern is a compiled reservation pattern.
type Pattern struct {
	raw   string
	exact bool // scheme patterns compare literally
	segs  []segment
}

type segment struct {
	any  bool   // "**": any number of segments
	lit  string // a segment without wildcards
	toks []tok  // a segment with wildcards
}

const (
	tokLit = iota
	tokOne
	tokStar
	tokClass
)

type tok struct {
	kind  uint8
	b     byte
	class *charClass
}

var patternCache sync.Map // string → *Pattern

// CompilePattern compiles a normalized pattern (see NormalizePattern).
// Compiled patterns are cached: reservation checks compile the same few
// patterns over and over.
func CompilePattern(p string) *Pattern {
	if c, ok := patternCache.Load(p); ok {
		return c.(*Pattern)
	}
	c := compile(p)
	if n := cacheSize.Add(1); n > 50000 { // unbounded input: start over now and then
		patternCache.Clear()
		cacheSize.Store(0)
	}
	patternCache.Store(p, c)
	return c
}

var cacheSize atomic.Int64

func compile(raw string) *Pattern {
	pt := &Pattern{raw: raw}
	if strings.Contains(raw, "://") {
		pt.exact = true
		return pt
	}
	p := NormalizePattern(raw, "")
	dir := strings.HasSuffix(p, "/")
	p = strings.TrimRight(p, "/")
	var parts []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		parts = []string{"**"}
	}
	if len(parts) == 1 && strings.ContainsAny(parts[0], "*?[") && parts[0] != "**" {
		parts = append([]string{"**"}, parts...) // gitignore: no slash, any depth
	}
	last := parts[len(parts)-1]
	// A directory covers its contents. A literal last segment names a
	// directory unless it looks like a file (has an extension); "src/*"
	// covers subdirectories too, "*.py" names files only.
	if dir || last == "*" || !strings.ContainsAny(last, "*?[") && !strings.Contains(strings.TrimPrefix(last, "."), ".") {
		parts = append(parts, "**")
	}
	for _, s := range parts {
		if s == "**" {
			if n := len(pt.segs); n > 0 && pt.segs[n-1].any {
				continue
			}
			pt.segs = append(pt.segs, segment{any: true})
			continue
		}
		if !strings.ContainsAny(s, "*?[") {
			pt.segs = append(pt.segs, segment{lit: s})
			continue
		}
		pt.segs = append(pt.segs, segment{toks: lex(s)})
	}
	return pt
}

// lex splits a segment into tokens; a "[" without a closing "]" is literal.
func lex(s string) []tok {
	var ts []tok
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '*':
			if len(ts) == 0 || ts[len(ts)-1].kind != tokStar {
				ts = append(ts, tok{kind: tokStar})
			}
		case '?':
			ts = append(ts, tok{kind: tokOne})
		case '[':
			if cl, n := parseClass(s[i:]); n > 0 {
				ts = append(ts, tok{kind: tokClass, class: cl})
				i += n - 1
				continue
			}
			ts = append(ts, tok{kind: tokLit, b: c})
		default:
			ts = append(ts, tok{kind: tokLit, b: c})
		}
	}
	return ts
}

// parseClass reads "[...]" at the start of s; n is its length (0: not a class).
func parseClass(s string) (*charClass, int) {
	i, neg := 1, false
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		neg, i = true, i+1
	}
	var set charClass
	start := i
	for ; i < len(s); i++ {
		if s[i] == ']' && i > start {
			if neg {
				for k := range set {
					set[k] = ^set[k]
				}
				set[0] &^= 1 << '/'
			}
			return &set, i + 1
		}
		lo, hi := s[i], s[i]
		if i+2 < len(s) && s[i+1] == '-' && s[i+2] != ']' {
			hi, i = s[i+2], i+2
		}
		for c := int(lo); c <= int(hi); c++ {
			set[c/64] |= 1 << (c % 64)
		}
	}
	return nil, 0
}

// charClass is a set of bytes.
type charClass [4]uint64

func (c *charClass) has(b byte) bool { return c[b/64]&(1<<(b%64)) != 0 }

// String returns the pattern as written.
func (p *Pattern) String() string { return p.raw }

// Match reports whether the pattern covers a concrete project path.
func (p *Pattern) Match(path string) bool {
	if p.exact {
		return p.raw == path
	}
	path = NormalizePattern(path, "")
	var parts []string
	for _, s := range strings.Split(path, "/") {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return matchSegs(p.segs, parts)
}

// matchSegs runs the pattern as an automaton over the path's segments: cur
// holds every position in segs reachable after the names read so far. That
// is O(len(segs) × len(parts)) whatever the pattern; trying each split of
// every "**" in turn (backtracking) was exponential in the number of "**"
// and let one pattern such as "**/a/**/a/…/b" stall a stale-holder scan.
func matchSegs(segs []segment, parts []string) bool {
	// Patterns are short: the two state sets live on the stack, as in
	// Overlap (the stale-holder scan calls this for every file).
	var buf [2][16]bool
	var cur, next []bool
	if n := len(segs) + 1; n <= len(buf[0]) {
		cur, next = buf[0][:n], buf[1][:n]
	} else {
		cur, next = make([]bool, n), make([]bool, n)
	}
	cur[0] = true
	skipAny(segs, cur)
	for _, name := range parts {
		clear(next)
		live := false
		for i, sg := range segs {
			if !cur[i] {
				continue
			}
			if sg.any {
				next[i] = true // "**" takes this name and stays
				live = true
			} else if sg.matches(name) {
				next[i+1] = true
				live = true
			}
		}
		if !live {
			return false
		}
		skipAny(segs, next)
		cur, next = next, cur
	}
	return cur[len(segs)]
}

// skipAny adds the positions reached by letting a "**" match no segment.
func skipAny(segs []segment, states []bool) {
	for i, sg := range segs {
		if states[i] && sg.any {
			states[i+1] = true
		}
	}
}

func (s segment) matches(name string) bool {
	if s.toks == nil {
		return s.lit == name
	}
	return matchToks(s.toks, name)
}

func matchToks(ts []tok, s string) bool {
	ti, si, starT, starS := 0, 0, -1, 0
	for si < len(s) {
		if ti < len(ts) {
			t := ts[ti]
			switch {
			case t.kind == tokStar:
				starT, starS = ti, si
				ti++
				continue
			case t.kind == tokOne || t.kind == tokLit && t.b == s[si] || t.kind == tokClass && t.class.has(s[si]):
				ti, si = ti+1, si+1
				continue
			}
		}
		if starT < 0 {
			return false
		}
		starS++
		ti, si = starT+1, starS
	}
	for ti < len(ts) && ts[ti].kind == tokStar {
		ti++
	}
	return ti == len(ts)
}
