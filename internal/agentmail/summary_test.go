package agentmail

import (
	"reflect"
	"slices"
	"testing"
)

func TestAgentMailSummarize(t *testing.T) {
	t.Parallel()
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

// FuzzSummarize reads thread bodies as agents write them: nothing panics,
// the answer is the same every time, the lists stay within their caps, and
// every action item was counted as open or done.
func FuzzSummarize(f *testing.F) {
	f.Add("# Plan\n- ship v2\n- [ ] write docs\nTODO: deploy", "@Carol see `api/v2/users`\n```\n- TODO: not\n```")
	f.Add("1) [x] done\n+ [X] also\n- BLOCKED - infra", "~~~\n@x\n~~~\n@Dan.")
	f.Fuzz(func(t *testing.T, a, b string) {
		ms := []Message{{SenderName: "A", BodyMD: a}, {SenderName: "B", BodyMD: b}}
		s := Summarize(ms)
		if again := Summarize(ms); !reflect.DeepEqual(s, again) {
			t.Fatalf("two summaries of the same thread differ:\n%+v\n%+v", s, again)
		}
		if len(s.KeyPoints) > maxSummaryItems || len(s.ActionItems) > maxSummaryItems || len(s.Mentions) > maxSummaryItems || len(s.CodeReferences) > maxSummaryItems {
			t.Fatalf("a list over %d items: %+v", maxSummaryItems, s)
		}
		if len(s.ActionItems) > s.OpenActions+s.DoneActions {
			t.Fatalf("%d action items but %d open + %d done", len(s.ActionItems), s.OpenActions, s.DoneActions)
		}
		if s.TotalMessages != 2 || len(s.Participants) != 2 {
			t.Fatalf("messages %d, participants %v", s.TotalMessages, s.Participants)
		}
	})
}
