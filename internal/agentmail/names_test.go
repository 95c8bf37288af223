package agentmail

import (
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/testutil"
)

func TestAgentMailNameProblem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ok   bool
		why  string
	}{
		{"GreenCastle", true, ""},
		{"ManagerMoose", true, ""}, // the reference silently replaced this one (#118)
		{"Agent7", true, ""},
		{"backend-1", true, ""},
		{"ci.bot", true, ""},
		{"", false, "empty"},
		{"Green Castle", false, "spaces"},
		{"dev@example.com", false, "e-mail"},
		{"claude-code", false, "program"},
		{"codex", false, "program"},
		{"gpt-5", false, "model"},
		{"opus-4.5", false, "model"},
		{"everyone", false, "everyone"},
		{"root", false, "unix"},
		{"x", false, "letters"},
		{"-lead", false, "letters"},
		{strings.Repeat("a", 65), false, "letters"},
	}
	for _, c := range cases {
		got := NameProblem(c.name)
		if (got == "") != c.ok || !strings.Contains(got, c.why) {
			t.Errorf("NameProblem(%q) = %q, want ok=%v containing %q", c.name, got, c.ok, c.why)
		}
	}
}

func TestAgentMailGenerateName(t *testing.T) {
	t.Parallel()
	if len(adjectives) != 62 || len(nouns) != 69 {
		t.Fatalf("word lists: %d × %d, want 62 × 69", len(adjectives), len(nouns))
	}
	taken := map[string]bool{}
	total := len(adjectives) * len(nouns)
	for i := range total + 5 { // exhaust every combination, then a few more
		n := GenerateName(taken, nil)
		if taken[strings.ToLower(n)] {
			t.Fatalf("name %d: %q generated twice", i, n)
		}
		if NameProblem(n) != "" {
			t.Fatalf("generated invalid name %q: %s", n, NameProblem(n))
		}
		taken[strings.ToLower(n)] = true
	}
}

func TestAgentMailAdjectiveNounName(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"GreenCastle", "GreenCastle"}, {"greencastle", "GreenCastle"}, {"SWIFTFOX", "SwiftFox"},
		{"GreenCastle2", "GreenCastle2"}, {"GreenCastle02", ""}, {"GreenCastle1234567", ""},
		{"ManagerMoose", ""}, {"coder-1", ""}, {"Green", ""}, {"Castle", ""}, {"CastleGreen", ""}, {"", ""},
	}
	for _, c := range cases {
		got, ok := AdjectiveNounName(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("AdjectiveNounName(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	// Every generated name follows the rule (5,000 names in make test, 1,000
	// in a quick run: testutil.Size).
	taken := map[string]bool{}
	for range testutil.Size(1000, 5000) {
		n := GenerateName(taken, nil)
		taken[strings.ToLower(n)] = true
		if _, ok := AdjectiveNounName(n); !ok {
			t.Fatalf("generated %q breaks the rule", n)
		}
	}
}
