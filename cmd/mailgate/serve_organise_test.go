package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestServeOrganiseAndScopes: through the real server (in-process), a token of an older
// release (gmail.readonly + gmail.compose) still searches, but
// modify_labels answers that it needs gmail.modify and that `mailgate auth`
// grants it; with the full grant it archives and writes its audit line
// with the counts.
func TestServeOrganiseAndScopes(t *testing.T) {
	parallel(t)
	w := newWorld(t, false)
	brkGrant("gmail.readonly", "gmail.compose")(t, w)
	cs := w.connectHere()
	text, isErr := call(t, cs, "search_email", map[string]any{"query": "invoice"})
	if isErr {
		t.Fatalf("search with an older token: %q", text)
	}
	id := regexp.MustCompile(`Message ID: (\w+)`).FindStringSubmatch(text)[1]
	text, isErr = call(t, cs, "modify_labels", map[string]any{"message_ids": []string{id}, "actions": []string{"archive"}})
	if !isErr || !strings.Contains(text, "gmail.modify") || !strings.Contains(text, "mailgate auth") {
		t.Fatalf("modify_labels with an older token = (%v) %q", isErr, text)
	}

	w2 := newWorld(t, false)
	cs = w2.connectHere()
	text, _ = call(t, cs, "search_email", map[string]any{"query": "invoice"})
	id = regexp.MustCompile(`Message ID: (\w+)`).FindStringSubmatch(text)[1]
	text, isErr = call(t, cs, "modify_labels", map[string]any{"message_ids": []string{id}, "actions": []string{"archive"}})
	if isErr || text != "Labels changed on 1 message: removed INBOX." {
		t.Fatalf("modify_labels = (%v) %q", isErr, text)
	}
	if a := readAudit(t, w2.home); !strings.Contains(a, `"tool":"modify_labels"`) || !strings.Contains(a, `1 message; removed INBOX; 1 done`) {
		t.Fatalf("audit lacks the modify_labels line with its counts:\n%s", a)
	}
}
