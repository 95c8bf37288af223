package gmailschema

import (
	"strings"
	"testing"
)

func load(t *testing.T) *Doc {
	t.Helper()
	d, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFind(t *testing.T) {
	t.Parallel()
	d := load(t)
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/gmail/v1/users/me/messages", "gmail.users.messages.list"},
		{"GET", "/gmail/v1/users/me/messages/18c1f0a2b3c4d5e6", "gmail.users.messages.get"},
		{"POST", "/gmail/v1/users/me/messages/send", "gmail.users.messages.send"},
		{"POST", "/upload/gmail/v1/users/me/messages/send", "gmail.users.messages.send"},
		{"GET", "/gmail/v1/users/me/messages/1/attachments/ANGjdJx", "gmail.users.messages.attachments.get"},
		{"POST", "/gmail/v1/users/me/drafts/send", "gmail.users.drafts.send"},
		{"DELETE", "/gmail/v1/users/me/drafts/r-1", "gmail.users.drafts.delete"},
		{"GET", "/gmail/v1/users/me/settings/sendAs", "gmail.users.settings.sendAs.list"},
		{"GET", "/gmail/v1/users/me/nothing", ""},
	} {
		got := ""
		if m := d.Find(c.method, c.path); m != nil {
			got = m.ID
		}
		if got != c.want {
			t.Errorf("%s %s = %q, want %q", c.method, c.path, got, c.want)
		}
	}
}

// TestCheckResponse: what passes and what the document refuses.
func TestCheckResponse(t *testing.T) {
	t.Parallel()
	d := load(t)
	get := "/gmail/v1/users/me/messages/18c1f0a2b3c4d5e6"
	list := "/gmail/v1/users/me/messages"
	for _, c := range []struct {
		name, path string
		status     int
		body       string
		want       string // a problem containing this; "" = none
	}{
		{"good message", get, 200, `{"id":"1","threadId":"1","labelIds":["INBOX"],"historyId":"12","internalDate":"1700000000000","sizeEstimate":42,` +
			`"payload":{"partId":"","mimeType":"text/plain","filename":"","headers":[{"name":"A","value":"b"}],"body":{"size":2,"data":"aGk"}}}`, ""},
		{"unknown field", get, 200, `{"id":"1","subject":"x"}`, `field "subject" is not in Gmail's Message`},
		{"nested unknown field", get, 200, `{"id":"1","payload":{"body":{"size":1,"text":"x"}}}`, `field "text" is not in Gmail's MessagePartBody`},
		{"historyId as a number", get, 200, `{"id":"1","historyId":12}`, "want a string (format \"uint64\")"},
		{"internalDate not a number", get, 200, `{"id":"1","internalDate":"yesterday"}`, `int64 string "yesterday"`},
		{"sizeEstimate as a string", get, 200, `{"id":"1","sizeEstimate":"42"}`, "want a JSON number"},
		{"data not base64url", get, 200, `{"id":"1","payload":{"body":{"data":"a+b/"}}}`, "not base64url"},
		{"null", get, 200, `{"id":"1","snippet":null}`, "null"},
		{"no id", get, 200, `{"threadId":"1"}`, `Message always carries "id"`},
		{"list item with a snippet", list, 200, `{"messages":[{"id":"1","threadId":"1","snippet":"x"}],"resultSizeEstimate":1}`, `Gmail's list items carry only [id threadId]`},
		{"draft list item with a full message", "/gmail/v1/users/me/drafts", 200, `{"drafts":[{"id":"r-1","message":{"id":"1","threadId":"1","snippet":"x"}}],"resultSizeEstimate":1}`, `.message has "snippet"`},
		{"label list item with counts", "/gmail/v1/users/me/labels", 200, `{"labels":[{"id":"INBOX","name":"INBOX","type":"system","messagesTotal":3}]}`, `has "messagesTotal"`},
		{"list without estimate", list, 200, `{"messages":[{"id":"1","threadId":"1"}]}`, `always carries "resultSizeEstimate"`},
		{"empty list", list, 200, `{"resultSizeEstimate":0}`, ""},
		{"label type outside the enum", "/gmail/v1/users/me/labels/Label_1", 200, `{"id":"Label_1","name":"x","type":"custom"}`, `"custom" is not one of Gmail's values`},
		{"a body where Gmail has none", "/gmail/v1/users/me/messages/batchModify", 200, `{}`, "Gmail answers no body"},
		{"error shape", get, 404, `{"error":{"code":404,"message":"Requested entity was not found.","errors":[{"message":"m","domain":"global","reason":"notFound"}],"status":"NOT_FOUND"}}`, ""},
		{"error without reason", get, 404, `{"error":{"code":404,"message":"x","status":"NOT_FOUND"}}`, "incomplete error body"},
		{"no such method", "/gmail/v1/users/me/nothing", 200, `{}`, "Gmail has no such method"},
	} {
		method := "GET"
		if strings.HasSuffix(c.path, "batchModify") {
			method = "POST"
		}
		got := d.CheckResponse(method, c.path, c.status, "application/json", []byte(c.body))
		joined := strings.Join(got, "\n")
		if (c.want == "") != (len(got) == 0) || !strings.Contains(joined, c.want) {
			t.Errorf("%s: problems %q, want one with %q", c.name, joined, c.want)
		}
	}
}
