package agentmail

import (
	"slices"
	"testing"
)

func TestAgentMailSummarize(t *testing.T) {
	msg := func(from, body string) Message { return Message{SenderName: from, BodyMD: body} }
	cases := []struct {
		name         string
		msgs         []Message
		points       []string
		actions      []string
		open, done   int
		mentions     []Mention
		code         []string
		participants []string
	}{
		{"plain text has no points", []Message{msg("B", "Test"), msg("A", "Reply")}, []string{}, []string{}, 0, 0, []Mention{}, nil, []string{"A", "B"}},
		{"bullets and headings are key points",
			[]Message{msg("A", "# Plan\n- ship v2\n* fix cache\n1. review")}, []string{"Plan", "ship v2", "fix cache", "review"}, []string{}, 0, 0, []Mention{}, nil, []string{"A"}},
		{"markers and checkboxes are actions",
			[]Message{msg("A", "- TODO: deploy\nNEXT: migrate DB\n- [ ] write docs\n- [x] review\n- BLOCKED: infra\nnot a TODO here")},
			[]string{}, []string{"TODO: deploy", "NEXT: migrate DB", "write docs", "review", "BLOCKED: infra"}, 4, 1, []Mention{}, nil, []string{"A"}},
		{"mentions and code references",
			[]Message{msg("A", "@Carol see `api/v2/users` and `main.go`; mail bob@example.com\n@Carol @Dan"), msg("B", "`not code` ok")},
			[]string{}, []string{}, 0, 0, []Mention{{"Carol", 2}, {"Dan", 1}}, []string{"api/v2/users", "main.go"}, []string{"A", "B"}},
		{"fenced code is skipped",
			[]Message{msg("A", "```\n- TODO: not an action\n```\n- real point")}, []string{"real point"}, []string{}, 0, 0, []Mention{}, nil, []string{"A"}},
	}
	for _, c := range cases {
		s := Summarize(c.msgs)
		if !slices.Equal(s.KeyPoints, c.points) || !slices.Equal(s.ActionItems, c.actions) || s.OpenActions != c.open || s.DoneActions != c.done ||
			!slices.Equal(s.Mentions, c.mentions) || !slices.Equal(s.CodeReferences, c.code) || !slices.Equal(s.Participants, c.participants) {
			t.Errorf("%s: got %+v", c.name, s)
		}
	}
}
