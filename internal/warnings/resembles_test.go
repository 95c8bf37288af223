package warnings

import "testing"

func TestResembles(t *testing.T) {
	known := []string{"alice@example.com", "billing@paypal.com", "Bob.Martin@acme.io"}
	for _, c := range []struct {
		addr, like string
	}{
		{"alice@examp1e.com", "alice@example.com"},
		{"alice@exampel.com", ""}, // two edits away (a swap)
		{"alice@exarnple.com", "alice@example.com"},
		{"billing@paypa1.com", "billing@paypal.com"},
		{"billing@pаypal.com", "billing@paypal.com"}, // Cyrillic а
		{"alice@example.co", "alice@example.com"},
		{"ALICE@example.com", ""},
		{"carol@example.com", ""},
		{"bob.martln@acme.io", "Bob.Martin@acme.io"},
		{"bob.marti@acme.io", ""},
	} {
		like, ok := Resembles(c.addr, known)
		if like != c.like || ok != (c.like != "") {
			t.Errorf("Resembles(%q) = %q, %v; want %q", c.addr, like, ok, c.like)
		}
	}
}
