package mailmsg

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSanitizeFilename(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 150) + ".pdf" // 304 bytes
	for _, c := range []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../../etc/passwd", "_.._etc_passwd"},
		{`..\..\windows\system32`, "_.._windows_system32"},
		{"..", "attachment"},
		{".", "attachment"},
		{"", "attachment"},
		{" \t\n", "attachment"},
		{".bashrc", "bashrc"},
		{"a\x00b\x1bc\x7f.txt", "abc.txt"},
		{"invoice\u202efdp.exe", "invoicefdp.exe"},
		{"a\u200bb\u2066c\ufeff.txt", "abc.txt"},
		{"tag\U000E0041.txt", "tag.txt"},
		{"a   b\t\tc.txt", "a b c.txt"},
		{"name. . .", "name"},
		{`a<b>c:d"e|f?g*h.txt`, "a_b_c_d_e_f_g_h.txt"},
		{"CON", "_CON"},
		{"nul.txt", "_nul.txt"},
		{"com1.tar.gz", "_com1.tar.gz"},
		{"LPT9", "_LPT9"},
		{"console.txt", "console.txt"},
		{"COM10", "COM10"},
		{"bad\xffutf8.txt", "bad_utf8.txt"},
		{"Résumé ☕.txt", "Résumé ☕.txt"},
		{long, strings.Repeat("é", 98) + ".pdf"},
		{strings.Repeat("a", 300), strings.Repeat("a", 200)},
		{strings.Repeat("a", 250) + "." + strings.Repeat("b", 30), strings.Repeat("a", 200)},
	} {
		if got := SanitizeFilename(c.in); got != c.want {
			t.Errorf("SanitizeFilename(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzSanitizeFilename(f *testing.F) {
	for _, s := range []string{"report.pdf", "../../etc/passwd", "..", "CON.txt", "invoice\u202efdp.exe",
		"a\x00b", "bad\xff", strings.Repeat("é", 150) + ".pdf", " . x . ", "com1", "\u2028x\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := SanitizeFilename(in)
		if got == "" || got == "." || got == ".." || len(got) > MaxFilenameBytes+1 || !utf8.ValidString(got) {
			t.Fatalf("SanitizeFilename(%q) = %q", in, got)
		}
		if strings.ContainsAny(got, `/\<>:"|?*`) || strings.HasPrefix(got, ".") || strings.HasPrefix(got, " ") ||
			strings.HasSuffix(got, ".") || strings.HasSuffix(got, " ") || strings.Contains(got, "  ") {
			t.Fatalf("SanitizeFilename(%q) = %q: unsafe character or edge", in, got)
		}
		for _, r := range got {
			if isInvisible(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || (unicode.IsSpace(r) && r != ' ') {
				t.Fatalf("SanitizeFilename(%q) = %q holds %U", in, got, r)
			}
		}
		if isReservedName(got) {
			t.Fatalf("SanitizeFilename(%q) = %q: a device name", in, got)
		}
		if again := SanitizeFilename(got); again != got {
			t.Fatalf("not idempotent: %q → %q → %q", in, got, again)
		}
	})
}
