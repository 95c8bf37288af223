package warnings

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func codes(ws []Warning) string {
	var c []string
	for _, w := range ws {
		c = append(c, w.Code)
	}
	return strings.Join(c, ",")
}

func TestAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []string // codes, in order
		text     []string // substrings of the joined texts
	}{
		{"plain", "bob@example.com", nil, nil},
		{"plain with name", "Bob Smith <bob@example.com>", nil, nil},
		{"accented name is fine", "José Müller <jose@example.com>", nil, nil},
		{"japanese name is fine", "山田 太郎 <taro@example.jp>", nil, nil},
		{"cyrillic a in domain", "bob@exаmple.com", []string{CodePunycode, CodeMixedScript, CodeLookalike},
			[]string{`looks like "bob@example.com"`, "U+0430 CYRILLIC SMALL LETTER A", "Cyrillic+Latin", "xn--"}},
		{"cyrillic o in local part", "bоb@example.com", []string{CodeMixedScript, CodeLookalike}, []string{`looks like "bob@example.com"`}},
		{"whole-script cyrillic domain", "pay@аррӏе.com", []string{CodePunycode, CodeLookalike}, []string{`looks like "pay@app`}},
		{"zero-width space", "bob\u200b@example.com", []string{CodeInvisible}, []string{"U+200B ZERO WIDTH SPACE"}},
		{"zero-width joiner in name", "Bo\u200db <bob@example.com>", []string{CodeInvisible}, []string{"display name", "U+200D ZERO WIDTH JOINER"}},
		{"RLO in address", "\u202emoc.elpmaxe@bob", []string{CodeInvisible}, []string{"U+202E RIGHT-TO-LEFT OVERRIDE"}},
		{"RLO in display name", "\"Bob \u202eretsiM\" <bob@example.com>", []string{CodeInvisible}, []string{"display name", "U+202E"}},
		{"punycode domain", "bob@xn--exmple-4nf.com", []string{CodePunycode, CodeMixedScript, CodeLookalike},
			[]string{"is punycode: it reads \"exаmple.com\"", `looks like "bob@example.com"`}},
		{"ascii punycode of a real IDN", "info@xn--bcher-kva.example", []string{CodePunycode}, []string{"bücher.example"}},
		{"undecodable xn--", "bob@xn--zz.com", []string{CodePunycode}, []string{"does not decode"}},
		{"greek omicron", "bob@gοogle.com", []string{CodePunycode, CodeMixedScript, CodeLookalike}, []string{`looks like "bob@google.com"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := Address("To", tt.in)
			if got, want := codes(ws), strings.Join(tt.want, ","); got != want {
				t.Fatalf("codes %q, want %q\n%s", got, want, strings.Join(Texts(ws), "\n"))
			}
			all := strings.Join(Texts(ws), "\n")
			for _, s := range tt.text {
				if !strings.Contains(all, s) {
					t.Errorf("warnings lack %q:\n%s", s, all)
				}
			}
		})
	}
}

func TestReplyTo(t *testing.T) {
	t.Parallel()
	tests := []struct{ from, replyTo, want string }{
		{"Dan <dan@example.com>", "", ""},
		{"Dan <dan@example.com>", "DAN@example.com", ""},
		{"Dan <dan@example.com>", "billing@example.com", CodeReplyTo},
		{"Dan <dan@example.com>", "Dan <dan@examp1e.com>", CodeReplyToDomain},
		{"Dan <dan@example.com>", "dan@exаmple.com", CodeReplyToDomain},
	}
	for _, tt := range tests {
		if got := codes(ReplyTo(tt.from, tt.replyTo)); got != tt.want {
			t.Errorf("ReplyTo(%q, %q) = %q, want %q", tt.from, tt.replyTo, got, tt.want)
		}
	}
	if w := ReplyTo("dan@example.com", "dan@examp1e.com"); !strings.Contains(w[0].Text, "another domain") {
		t.Errorf("domain warning %q", w[0].Text)
	}
}

func TestBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     string // codes
		text     string
	}{
		{"plain", "Hi Bob,\n\nSee you.\n", "", ""},
		{"obsidian comment", "Hi\n%%wire 10k to X%%\n", CodeHidden, "Obsidian comment (%%…%%), hidden in Obsidian's reading view on line 2"},
		{"html comment", "Hi <!-- secret -->\n", CodeHidden, "HTML comment"},
		{"html tag", "Hi\n<span style=\"display:none\">x</span>\n", CodeHidden, "HTML tags"},
		{"link reference definition", "Hi\n\n[1]: https://evil.example/\n", CodeHidden, "link reference definition ([label]: …), which a viewer does not show on line 3"},
		{"footnote definition", "Hi\n[^a]: hidden\n", CodeHidden, "line 2"},
		{"lone CR", "Pay 10 EUR\rPay 10000 EUR\n", CodeLoneCR, "line 1"},
		{"CRLF is fine", "Hi\r\nthere\r\n", "", ""},
		{"zero-width in body", "Hi\u200b\n", CodeInvisible, "U+200B"},
		{"a lone less-than is fine", "1 < 2 and 3 > 2\n", "", ""},
		{"several", "%%a%%\n<!-- b -->\r", CodeHidden + "," + CodeHidden + "," + CodeLoneCR, "carriage return without a line feed on line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := Body(tt.in)
			if got := codes(ws); got != tt.want {
				t.Fatalf("codes %q, want %q\n%s", got, tt.want, strings.Join(Texts(ws), "\n"))
			}
			if all := strings.Join(Texts(ws), "\n"); !strings.Contains(all, tt.text) {
				t.Errorf("warnings lack %q:\n%s", tt.text, all)
			}
		})
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"a\u202eb", "a⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩b"},
		{"x\ry\r\nz", "x⟨CR⟩y\r\nz"},
		{"nb\u00a0sp", "nb⟨U+00A0 NO-BREAK SPACE⟩sp"},
		{"\x00", "⟨U+0000⟩"},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzWarnings: no input panics, every finding is one line, and Escape
// leaves nothing hidden behind.
func FuzzWarnings(f *testing.F) {
	for _, s := range []string{"bob@exаmple.com", "Bo\u200db <bob@example.com>", "\u202emoc.elpmaxe@bob", "bob@xn--exmple-4nf.com",
		"%%x%%\n<!-- y -->\r[1]: z", "\xff\xfe", "a@b", "<", "xn--", "@xn--.", "\"\u202e\" <a@b.c>"} {
		f.Add(s, "dan@example.com")
	}
	f.Fuzz(func(t *testing.T, s, other string) {
		var ws []Warning
		ws = append(ws, Address("To", s)...)
		ws = append(ws, ReplyTo(other, s)...)
		ws = append(ws, Body(s)...)
		ws = append(ws, Text("Subject", s)...)
		for _, w := range ws {
			if w.Code == "" || w.Text == "" || strings.ContainsAny(w.Text, "\n\r") {
				t.Fatalf("bad warning %+v for %q", w, s)
			}
		}
		e := Escape(s)
		if utf8.ValidString(s) && strings.ContainsFunc(e, func(r rune) bool { return r != '\n' && r != '\r' && r != '\t' && hidden(r) }) {
			t.Fatalf("Escape(%q) = %q still hides characters", s, e)
		}
	})
}

// TestHiddenASCII: hidden's ASCII shortcut says what the Unicode classes it
// skips say.
func TestHiddenASCII(t *testing.T) {
	t.Parallel()
	for r := rune(0); r < utf8.RuneSelf; r++ {
		want := r != '\n' && r != '\t' && r != ' ' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r) ||
			unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r) ||
			unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) || unicode.Is(unicode.Zs, r))
		if got := hidden(r); got != want {
			t.Errorf("hidden(%U) = %v, want %v", r, got, want)
		}
	}
}
