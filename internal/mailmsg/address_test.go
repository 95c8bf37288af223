package mailmsg

import (
	"errors"
	"net/mail"
	"strings"
	"testing"
)

func TestParseAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		wantName string
		wantAddr string // "" means the input must be refused
	}{
		{"a@example.com", "", "a@example.com"},
		{"  a@example.com  ", "", "a@example.com"},
		{"Alice <alice@example.com>", "Alice", "alice@example.com"},
		{`"Doe, John" <john@example.com>`, "Doe, John", "john@example.com"},
		{"Jöhn <j@example.com>", "Jöhn", "j@example.com"},
		{"o'brien+tag@example.com", "", "o'brien+tag@example.com"},
		{"Bob <b.o.b@example.com>", "Bob", "b.o.b@example.com"},
		// A quoted local part is refused, even a harmless one: what a
		// person reads must be where the email goes.
		{`"a.b"@example.com`, "", ""},
		{`"a b"@example.com`, "", ""},
		{`"ceo@mycompany.com"@evil.test`, "", ""},
		{`Boss <"ceo@mycompany.com"@evil.test>`, "", ""},
		{`ceo\@mycompany.com@evil.test`, "", ""},
		{`"ceo"@evil.test`, "", ""},

		{"not-an-email", "", ""},
		{"", "", ""},
		{"   ", "", ""},
		{"a@x.com, b@y.com", "", ""}, // a second recipient smuggled into "to"
		{"a@x.com; b@y.com", "", ""},
		{"team: a@x.com;", "", ""}, // a group holding one address
		{"team:;", "", ""},
		{"a@x.com\r\nBcc: evil@y.com", "", ""}, // header injection
		{"a@x.com\nBcc: evil@y.com", "", ""},
		{"a@x.com\x00", "", ""},
		{"Bob <a@x.com> <b@y.com>", "", ""},
		{"a@localhost", "", ""}, // not a deliverable domain
		{"a@[127.0.0.1]", "", ""},
		{"a@x..com", "", ""},
		{"=?UTF-8?Q?a=0D=0ABcc:_e@y.com?= <a@x.com>", "", ""}, // CR/LF hidden in an encoded-word
		{"\xff@x.com", "", ""},
		// What a human reads in a request file must be what is addressed:
		// no comments, no encoded names, no name that looks like an address.
		{`"Say \"hi\"" <q@example.com>`, "", ""},
		{"=?UTF-8?Q?Andr=C3=A9?= <andre@example.com>", "", ""},
		{"a@x.com (Bob)", "", ""},
		{"Bob (the boss) <a@x.com>", "", ""},
		{"boss@example.com <evil@attacker.io>", "", ""},
		{`"boss@example.com" <evil@attacker.io>`, "", ""},
		{strings.Repeat("a", 250) + "@example.com", "", ""},
	}
	for _, tt := range tests {
		got, err := ParseAddress(tt.in)
		if tt.wantAddr == "" {
			if err == nil {
				t.Errorf("ParseAddress(%q) = %+v, want an error", tt.in, got)
				continue
			}
			var ie *InvalidAddressError
			if !errors.As(err, &ie) {
				t.Errorf("ParseAddress(%q) error %T, want *InvalidAddressError", tt.in, err)
			}
			if want := "Invalid email address format: " + tt.in; err.Error() != want && !strings.HasPrefix(err.Error(), want+" (") {
				t.Errorf("ParseAddress(%q) error = %q, want %q", tt.in, err.Error(), want)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseAddress(%q): %v", tt.in, err)
			continue
		}
		if got.Name != tt.wantName || got.Address != tt.wantAddr {
			t.Errorf("ParseAddress(%q) = (%q, %q), want (%q, %q)", tt.in, got.Name, got.Address, tt.wantName, tt.wantAddr)
		}
	}
}

// TestQuotedLocalPartNamesRealDomain: issue 32 item 6. The address a
// person reads as ceo@mycompany.com goes to evil.test; the refusal says so.
func TestQuotedLocalPartNamesRealDomain(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"ceo@mycompany.com"@evil.test`, `CEO <"ceo@mycompany.com"@evil.test>`} {
		_, err := ParseAddress(in)
		if err == nil {
			t.Fatalf("ParseAddress(%q) accepted", in)
		}
		want := "Invalid email address format: " + in + ` (a quoted local part or an @ inside one is refused: this address goes to the domain evil.test, not to the one inside the quotes)`
		if err.Error() != want {
			t.Errorf("ParseAddress(%q) = %q, want %q", in, err, want)
		}
	}
	// The same through Validate, the one validator of an outgoing email.
	_, err := Validate(Input{To: []string{"a@example.com"}, Cc: []string{`"ceo@mycompany.com"@evil.test`}, Subject: "s", Body: "b"})
	if err == nil || !strings.Contains(err.Error(), "evil.test") {
		t.Fatalf("Validate: %v, want a refusal naming evil.test", err)
	}
}

func TestContractErrorText(t *testing.T) {
	t.Parallel()
	_, err := ParseAddress("not-an-email")
	if got, want := "Error: "+err.Error(), "Error: Invalid email address format: not-an-email"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFormatAddressRoundTrips(t *testing.T) {
	t.Parallel()
	for _, a := range []*mail.Address{
		{Name: "Doe, John", Address: "john@example.com"},
		{Name: `Quote " and \ backslash`, Address: "q@example.com"},
		{Name: "two  spaces", Address: "t@example.com"},
		{Name: " edge ", Address: "e@example.com"},
		{Name: "=?UTF-8?Q?looks_encoded?=", Address: "l@example.com"},
		{Name: strings.Repeat("Ünïcødé ", 20), Address: "u@example.com"},
		{Name: strings.Repeat("x", 200), Address: "long@example.com"},
		{Name: "tab\there", Address: "tab@example.com"},
	} {
		back, err := mail.ParseAddress(formatAddress(a))
		if err != nil || back.Name != a.Name || back.Address != a.Address {
			t.Errorf("formatAddress(%q) = %q: parsed back as %+v, %v", a.Name, formatAddress(a), back, err)
		}
	}
}

func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{
		"a@example.com", "Alice <alice@example.com>", `"Doe, John" <john@example.com>`,
		"a@x.com, b@y.com", "team: a@x.com;", "a@x.com\r\nBcc: e@y.com",
		"=?UTF-8?B?w6lsw6h2ZQ==?= <e@example.com>", `"a\"b" <c@d.ef>`, "a@x.com (comment)",
		"<a@x.com>", "a@[1.2.3.4]", `"x y"@example.com`, `"ceo@mycompany.com"@evil.test`, `a\@b@c.de`, "Jöhn Dœ <j@exämple.com>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			var ie *InvalidAddressError
			want := "Invalid email address format: " + s
			if !errors.As(err, &ie) || (err.Error() != want && !strings.HasPrefix(err.Error(), want+" (")) {
				t.Fatalf("ParseAddress(%q): unexpected error %T %v", s, err, err)
			}
			return
		}
		// No quoted local part and no '@' inside one: the domain a person
		// reads last is where the email goes.
		at := strings.LastIndexByte(a.Address, '@')
		if strings.IndexByte(a.Address[:at], '@') >= 0 || strings.Contains(a.Address, `"`) {
			t.Fatalf("%q accepted as %q: an @ or a quote in the local part", s, a.Address)
		}
		if i := strings.LastIndexByte(s, '<'); strings.Contains(s[max(i, 0):], `"`) {
			t.Fatalf("%q accepted: a quoted local part", s)
		}
		if strings.ContainsAny(s, "\r\n\x00") {
			t.Fatalf("accepted %q containing CR/LF/NUL", s)
		}
		// Accepted addresses round-trip through the header we write ...
		back, err := mail.ParseAddress(formatAddress(a))
		if err != nil || back.Name != a.Name || back.Address != a.Address {
			t.Fatalf("%q: %+v rendered %q, parsed back %+v, %v", s, a, formatAddress(a), back, err)
		}
		// ... and through net/mail's own rendering.
		back, err = mail.ParseAddress(a.String())
		if err != nil || back.Name != a.Name || back.Address != a.Address {
			t.Fatalf("%q: %+v String() %q, parsed back %+v, %v", s, a, a.String(), back, err)
		}
		if list, err := mail.ParseAddressList(s); err != nil || len(list) != 1 {
			t.Fatalf("%q accepted but ParseAddressList gives %d addresses, %v", s, len(list), err)
		}
	})
}
