package mailmsg

import (
	"errors"
	"mime"
	"net/mail"
	"strings"
	"testing"
)

// checkNoControls fails on any byte of a rendered header that is a control
// character other than the CRLF+space of folding.
func checkNoControls(t *testing.T, enc string) {
	t.Helper()
	for i := 0; i < len(enc); i++ {
		if c := enc[i]; c < 0x20 || c >= 0x7f {
			t.Fatalf("encoded value holds byte %#x at %d: %q", c, i, enc)
		}
	}
}

func TestEncodeHeaderValue(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"plain", "Plan for the parser"},
		{"CRLF injection", "x\r\nReply-To: attacker@evil.example\r\n\r\nforged"},
		{"lone LF", "a\nBcc: b@evil.example"},
		{"NUL and DEL", "a\x00b\x7fc"},
		{"bidi override", "abc\u202edcba"},
		{"encoded-word lookalike", "=?UTF-8?Q?x?="},
		{"edge spaces", "  a  b  "},
		{"long word", strings.Repeat("x", 300)},
		{"invalid UTF-8", "a\xffb"},
		{"empty", ""},
	}
	var dec mime.WordDecoder
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			enc := EncodeHeaderValue(tc.in)
			checkNoControls(t, enc)
			got, err := dec.DecodeHeader(enc)
			if err != nil || got != tc.in {
				t.Errorf("EncodeHeaderValue(%q) = %q decodes to %q (%v)", tc.in, enc, got, err)
			}
		})
	}
}

// TestHeaderRefusesRawControls: a structured value (which cannot be
// encoded) holding a line break refuses the whole header.
func TestHeaderRefusesRawControls(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"<a@b>\r\nBcc: x@evil.example", "a\x00", "a\u0085b", "a\xffb", "a\x7f"} {
		var h Header
		h.Structured("Message-ID", v)
		_, err := h.Bytes()
		var he *HeaderError
		if !errors.As(err, &he) {
			t.Errorf("Structured(%q): err = %v, want *HeaderError", v, err)
		}
	}
	var ok Header
	ok.Structured("To", "<jöhn@example.com>") // RFC 6532: UTF-8 stays
	if _, err := ok.Bytes(); err != nil {
		t.Errorf("an internationalized address was refused: %v", err)
	}
	var h Header
	h.Text("Bad\r\nName", "x")
	if _, err := h.Bytes(); err == nil {
		t.Error("a field name with CRLF was accepted")
	}
	h = Header{}
	h.Addresses("To", &mail.Address{Name: "a\r\nBcc: x", Address: "a@b.example"})
	if _, err := h.Bytes(); err == nil {
		t.Error("an address with CRLF in its name was accepted")
	}
}

// FuzzEncodeHeaderValue: whatever the input, the encoded value holds no
// CR, LF or other control character, fits a header line when folded, and
// decodes back to the input.
func FuzzEncodeHeaderValue(f *testing.F) {
	for _, s := range []string{"", "hello", "x\r\nReply-To: a@b", "Réunion ☕", "=?utf-8?q?x?=", "\x00\x1b[31m", "a\u202eb", strings.Repeat("é", 100), "a\xff"} {
		f.Add(s)
	}
	var dec mime.WordDecoder
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeHeaderValue(s)
		checkNoControls(t, enc)
		got, err := dec.DecodeHeader(enc)
		if err != nil || got != s {
			t.Fatalf("EncodeHeaderValue(%q) = %q decodes to %q (%v)", s, enc, got, err)
		}
		var h Header
		h.Text("X-Test", s)
		raw, err := h.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(raw), "\r\n\r\n"), "\r\n")
		for i, l := range lines {
			if len(l) > 998 {
				t.Fatalf("line %d is %d octets", i, len(l))
			}
			if i > 0 && !strings.HasPrefix(l, " ") {
				t.Fatalf("line %d is not a continuation: %q", i, l)
			}
		}
	})
}

// TestBuildInternationalizedAddress: routing Build through Header keeps
// what Build accepted before: UTF-8 addresses (RFC 6532) are written as is.
func TestBuildInternationalizedAddress(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"jöhn@example.com", "a@bücher.de", "Jöhn <j@example.com>"} {
		a, err := ParseAddress(s)
		if err != nil {
			t.Fatalf("ParseAddress(%q): %v", s, err)
		}
		if _, err := Build(Outgoing{To: a, Subject: "s", Body: "b"}); err != nil {
			t.Errorf("Build to %q: %v", s, err)
		}
	}
}
