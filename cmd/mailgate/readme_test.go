package main

import (
	"os"
	"regexp"
	"testing"
)

// readmeBlock returns the fenced block that follows the marker comment in
// README.md, so that the test runs what README says, not a copy of it.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(marker) + "[^\n]*-->\n```[a-z]*\n(.*?)\n```").FindSubmatch(b)
	if m == nil {
		t.Fatalf("README.md has no block marked %s", marker)
	}
	return string(m[1])
}

// TestREADMEFirstScreen: README opens with what mailgate is, then Install,
// Connect and Try it, in that order, each with a command to copy.
func TestREADMEFirstScreen(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	heads := regexp.MustCompile(`(?m)^## (.*)$`).FindAllStringSubmatchIndex(string(b), 3)
	want := []string{"Install", "Connect", "Try it"}
	for i, h := range heads {
		if got := string(b[h[2]:h[3]]); got != want[i] {
			t.Fatalf("README section %d is %q, want %q", i+1, got, want[i])
		}
		body := string(b[h[1]:])
		if !regexp.MustCompile("^\\s*(?:[^\n]*\n){0,3}?```sh\nmailgate |^\\s*```sh\ngo install github.com/mailgate/mailgate/cmd/mailgate@latest\n").MatchString(body) {
			t.Errorf("README's %q does not start with a command to copy", want[i])
		}
	}
}
