package agentmail

// Overlap reports whether some path is covered by both patterns. It walks
// the product of the two patterns' automata (segments, then characters
// within two wildcard segments), so the answer does not depend on the order
// of the arguments and is exact for glob against glob.
func Overlap(a, b *Pattern) bool {
	if a.exact || b.exact {
		return a.exact && b.exact && a.raw == b.raw
	}
	x, y := a.segs, b.segs
	w := len(y) + 1
	var buf [64]bool
	seen := buf[:0]
	if n := (len(x) + 1) * w; n <= len(buf) {
		seen = buf[:n]
	} else {
		seen = make([]bool, n)
	}
	var sbuf [32][2]int
	return productReaches(x, y, sbuf[:0], seen, func(s segment) bool { return s.any },
		func(a, b segment) bool { return a.any || b.any || segmentsIntersect(a, b) })
}

// productReaches is the search Overlap makes over segments and
// toksIntersect over characters: depth first over the product of two
// automata, a state per position in x and in y (seen, indexed
// i*(len(y)+1)+j, marks those visited; stack is room for the search's
// stack), it reports whether the ends of both are reached together. A
// star element matches any number of things: the search may step past it
// alone (it matched none), or stay on it while the other side consumes one.
// Two elements meet where one thing (a segment, a character) satisfies
// both; each that is not a star then consumes it.
func productReaches[E any](x, y []E, stack [][2]int, seen []bool, star func(E) bool, meet func(a, b E) bool) bool {
	w := len(y) + 1
	stack = append(stack, [2]int{0, 0})
	for {
		var i, j int
		var ok bool
		if stack, i, j, ok = nextPair(stack, seen, w); !ok {
			return false
		}
		if i == len(x) && j == len(y) {
			return true
		}
		if i < len(x) && star(x[i]) {
			stack = append(stack, [2]int{i + 1, j})
		}
		if j < len(y) && star(y[j]) {
			stack = append(stack, [2]int{i, j + 1})
		}
		if i == len(x) || j == len(y) || !meet(x[i], y[j]) {
			continue
		}
		ni, nj := i+1, j+1
		if star(x[i]) {
			ni = i
		}
		if star(y[j]) {
			nj = j
		}
		// Two stars meeting make a self-loop: the moves above make the
		// progress.
		if ni != i || nj != j {
			stack = append(stack, [2]int{ni, nj})
		}
	}
}

// nextPair pops the next pair of states (i, j) not visited yet from
// productReaches' stack, and marks it visited in seen, indexed i*w+j; ok is
// false when the stack holds no such pair.
func nextPair(stack [][2]int, seen []bool, w int) (rest [][2]int, i, j int, ok bool) {
	for len(stack) > 0 {
		i, j = stack[len(stack)-1][0], stack[len(stack)-1][1]
		stack = stack[:len(stack)-1]
		if !seen[i*w+j] {
			seen[i*w+j] = true
			return stack, i, j, true
		}
	}
	return stack, 0, 0, false
}

// segmentsIntersect reports whether one segment name matches both.
func segmentsIntersect(a, b segment) bool {
	switch {
	case a.toks == nil && b.toks == nil:
		return a.lit == b.lit
	case a.toks == nil:
		return matchToks(b.toks, a.lit)
	case b.toks == nil:
		return matchToks(a.toks, b.lit)
	}
	return toksIntersect(a.toks, b.toks)
}

// toksIntersect decides whether two wildcard segments share a name, by
// searching the product of their token automata. (Names are never empty,
// but that needs no check: a token list matching the empty name is all
// stars and so matches every name the other one does.)
func toksIntersect(a, b []tok) bool {
	seen := make([]bool, (len(a)+1)*(len(b)+1))
	return productReaches(a, b, nil, seen, func(t tok) bool { return t.kind == tokStar }, charsCompatible)
}

// charsCompatible reports whether one character satisfies both tokens.
func charsCompatible(a, b tok) bool {
	if a.kind == tokStar || a.kind == tokOne {
		return b.kind != tokClass || !emptyClass(b.class)
	}
	if b.kind == tokStar || b.kind == tokOne {
		return a.kind != tokClass || !emptyClass(a.class)
	}
	switch {
	case a.kind == tokLit && b.kind == tokLit:
		return a.b == b.b
	case a.kind == tokLit:
		return b.class.has(a.b)
	case b.kind == tokLit:
		return a.class.has(b.b)
	}
	for k := range a.class {
		if a.class[k]&b.class[k] != 0 {
			return true
		}
	}
	return false
}

func emptyClass(c *charClass) bool { return c[0]|c[1]|c[2]|c[3] == 0 }
