package localgmail

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"

	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
)

// Where Gmail differs from the naive reading of its API, the server does
// what Gmail does. Each behaviour, where it is documented, and its test:
//
//   - attachment ids new on every read, all usable: google_workspace_mcp PR
//     #237 ("ephemeral attachment ids") — TestAttachmentIDs
//   - small attachments inline in body.data, no id: MessagePartBody
//     reference; relaticle PR #668 — TestAttachmentIDs, TestGetFormats
//   - messages.list answers id and threadId only, resultSizeEstimate,
//     nextPageToken: users.messages/list — TestListPaginationAndFilters (and
//     gmailschema's shape rules on every answer of every test)
//   - user label ids Label_N: labels.list answers — TestLabelsAndProfile
//   - threads.get, oldest first: users.threads/get — TestThreadsGet
//   - a send with a threadId whose subject differs starts a new thread:
//     guides/threads — TestSendThreading ("different subject")
//   - Bcc kept on the sender's copy, stripped for recipients: RFC 5322
//     §3.6.3 — TestCcBccDelivery
//   - quota errors as Gmail words them, 403 insufficientPermissions:
//     guides/handle-errors — TestQuotaErrorsAsGmailWordsThem, TestScopes
//   - batchModify over 1,000 ids refused: BatchModifyMessagesRequest —
//     TestBatchModify
//   - the upload size limits: the discovery document's mediaUpload.maxSize —
//     TestUploadSizeLimits
//   - drafts.send of a missing draft 404: users.drafts/send — TestDrafts
//   - historyId increasing on every change: users.history/list ("History
//     IDs increase chronologically") — TestHistoryIDIncreasesOnEveryChange

// TestQuotaErrorsAsGmailWordsThem: the 429 and the 403 of a spent quota,
// each with Retry-After, as the Go client sees them.
func TestQuotaErrorsAsGmailWordsThem(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y"), "INBOX")
	for _, c := range []struct {
		status         int
		reason, domain string
		message        string
	}{
		{429, "rateLimitExceeded", "global", "Resource has been exhausted (e.g. check quota)."},
		{403, "userRateLimitExceeded", "usageLimits", "User Rate Limit Exceeded"},
	} {
		s.Inject(Fault{Op: "messages.get", Status: c.status, Reason: c.reason, Header: http.Header{"Retry-After": {"7"}}})
		_, err := svc.Users.Messages.Get("me", m.Id).Do()
		wantAPIError(t, err, c.status, c.reason, c.message)
		ge := gerr(t, err)
		if ge.Header.Get("Retry-After") != "7" || !strings.Contains(ge.Body, `"domain":"`+c.domain+`"`) {
			t.Errorf("%d %s: Retry-After %q, body %s (want domain %q)", c.status, c.reason, ge.Header.Get("Retry-After"), ge.Body, c.domain)
		}
	}
}

// TestUploadSizeLimits: the limits are the discovery document's, and a
// message one byte over is refused before it is stored.
func TestUploadSizeLimits(t *testing.T) {
	t.Parallel()
	doc, err := gmailschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"/gmail/v1/users/me/messages/send": maxSendSize, "/gmail/v1/users/me/drafts": maxSendSize,
		"/gmail/v1/users/me/drafts/send": maxSendSize, "/gmail/v1/users/me/messages": maxInsertSize,
	} {
		m := doc.Find("POST", path)
		if m == nil || m.MediaUpload == nil || m.MediaUpload.MaxSize != strconv.Itoa(want) {
			t.Errorf("%s: the document's maxSize is not %d: %+v", path, want, m)
		}
	}
	s, svc := newService(t, Options{})
	big := append(msg("me@sandbox.local", "bob@example.org", "big", "x"), bytes.Repeat([]byte("a"), maxSendSize)...)
	_, err = svc.Users.Messages.Send("me", &gmail.Message{}).Media(bytes.NewReader(big), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(0)).Do()
	wantAPIError(t, err, 400, "badRequest", "Request payload size exceeds the limit: 36700160 bytes.")
	if len(s.Sent()) != 0 {
		t.Fatal("an oversized message was sent")
	}
}

// TestHistoryIDIncreasesOnEveryChange: the mailbox's historyId (profile)
// grows with every change, and a changed message takes the new one.
func TestHistoryIDIncreasesOnEveryChange(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	last := uint64(0)
	step := func(what string) {
		t.Helper()
		p, err := svc.Users.GetProfile("me").Do()
		if err != nil {
			t.Fatal(err)
		}
		if p.HistoryId <= last {
			t.Errorf("after %s: historyId %d, not above %d", what, p.HistoryId, last)
		}
		last = p.HistoryId
	}
	step("start")
	m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y", "Message-ID: <h1@example.com>"), "INBOX")
	step("insert")
	before, _ := svc.Users.Messages.Get("me", m.Id).Format("minimal").Do()
	if _, err := svc.Users.Messages.Modify("me", m.Id, &gmail.ModifyMessageRequest{AddLabelIds: []string{"STARRED"}}).Do(); err != nil {
		t.Fatal(err)
	}
	step("modify")
	after, _ := svc.Users.Messages.Get("me", m.Id).Format("minimal").Do()
	if after.HistoryId <= before.HistoryId || after.HistoryId != last {
		t.Errorf("message historyId %d → %d (mailbox %d)", before.HistoryId, after.HistoryId, last)
	}
	if _, err := svc.Users.Messages.Trash("me", m.Id).Do(); err != nil {
		t.Fatal(err)
	}
	step("trash")
	if _, err := svc.Users.Messages.Untrash("me", m.Id).Do(); err != nil {
		t.Fatal(err)
	}
	step("untrash")
	if _, err := svc.Users.Labels.Create("me", &gmail.Label{Name: "Projects"}).Do(); err != nil {
		t.Fatal(err)
	}
	step("labels.create")
	raw := b64(msg("me@sandbox.local", "bob@example.org", "draft", "one"))
	d, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: raw}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	step("drafts.create")
	if _, err := svc.Users.Drafts.Update("me", d.Id, &gmail.Draft{Message: &gmail.Message{Raw: b64(msg("me@sandbox.local", "bob@example.org", "draft", "two"))}}).Do(); err != nil {
		t.Fatal(err)
	}
	step("drafts.update")
	if _, err := svc.Users.Drafts.Send("me", &gmail.Draft{Id: d.Id}).Do(); err != nil {
		t.Fatal(err)
	}
	step("drafts.send")
	if _, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: raw}).Do(); err != nil {
		t.Fatal(err)
	}
	step("messages.send")
	d, _ = svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: raw}}).Do()
	step("drafts.create")
	if err := svc.Users.Drafts.Delete("me", d.Id).Do(); err != nil {
		t.Fatal(err)
	}
	step("drafts.delete")
}
