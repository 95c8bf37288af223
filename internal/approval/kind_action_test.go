package approval

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func draftReq() Request {
	return Request{Kind: KindSendDraft, DraftID: "r-5120", MessageID: "18f0a1b2c3", Subject: "Plan for Q3",
		Body: "Draft: r-5120 (content version 18f0a1b2c3)\nTo: alice@example.com\nBcc: dave@example.com\n\n--- text ---\nHello all.\n"}
}

func trashReq() Request {
	return Request{Kind: KindTrash, MessageID: "18d5a3b2c1d0e0f2", Subject: "Cheap watches",
		Body: "Move to Trash: message 18d5a3b2c1d0e0f2\nFrom: eve@example.com\n"}
}

func TestValidateAction(t *testing.T) {
	t.Parallel()
	with := func(r Request, f func(*Request)) Request { f(&r); return r }
	tests := []struct {
		name  string
		req   Request
		field string // "" when valid
	}{
		{"draft", draftReq(), ""},
		{"trash message", trashReq(), ""},
		{"trash thread", with(trashReq(), func(r *Request) { r.ThreadID, r.MessageID = r.MessageID, "" }), ""},
		{"draft without id", with(draftReq(), func(r *Request) { r.DraftID = "" }), "draft_id"},
		{"draft id with a slash", with(draftReq(), func(r *Request) { r.DraftID = "r1/../x" }), "draft_id"},
		{"draft without version", with(draftReq(), func(r *Request) { r.MessageID = "" }), "message_id"},
		{"draft with a thread", with(draftReq(), func(r *Request) { r.ThreadID = "t1" }), "thread_id"},
		{"trash of both", with(trashReq(), func(r *Request) { r.ThreadID = "t1" }), "message_id"},
		{"trash of nothing", with(trashReq(), func(r *Request) { r.MessageID = "" }), "message_id"},
		{"trash with a draft id", with(trashReq(), func(r *Request) { r.DraftID = "r1" }), "message_id"},
		{"subject with LF", with(draftReq(), func(r *Request) { r.Subject = "a\nBcc: x@evil" }), "subject"},
		{"description not UTF-8", with(trashReq(), func(r *Request) { r.Body = "\xff" }), "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			var ve *ValidationError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.field != "" && (!errors.As(err, &ve) || ve.Field != tt.field):
				t.Fatalf("got %v, want a %s error", err, tt.field)
			}
		})
	}
}

// The draft id is bound (and only a draft's hash has it), and so is the
// content version.
func TestActionSHA256Binding(t *testing.T) {
	t.Parallel()
	base := draftReq()
	other := base
	other.DraftID = "r-5121"
	edited := base
	edited.MessageID = "18f0a1b2c4"
	if base.SHA256() == other.SHA256() || base.SHA256() == edited.SHA256() {
		t.Fatal("draft id or content version not bound")
	}
	// Every other kind hashes as before the draft_id field existed.
	if got := sendReq().SHA256(); got != (Request{Kind: KindSend, To: "john@example.com", Subject: "Meeting notes", Body: sendReq().Body}).SHA256() {
		t.Fatal("a send's hash changed")
	}
}

func TestActionRequestFile(t *testing.T) {
	t.Parallel()
	v, _ := newVault(t, Options{})
	for _, tt := range []struct {
		req                 Request
		marker, slug, field string
	}{
		{draftReq(), DraftMarker, "_draft-r-5120_", `draft_id: "r-5120"`},
		{trashReq(), TrashMarker, "_trash-18d5a3b2c1d0e0f2_", `message_id: "18d5a3b2c1d0e0f2"`},
	} {
		name := pending(t, v, tt.req)
		data := readFile(t, v.path(DirPending, name))
		if !strings.Contains(name, tt.slug) || !strings.Contains(data, tt.field) || !strings.Contains(data, tt.marker+"\n\n"+tt.req.Body) ||
			strings.Contains(data, BodyMarker) || strings.Contains(data, "you may correct the subject") {
			t.Fatalf("%s:\n%s", name, data)
		}
		p, err := parseApproval([]byte(data))
		if err != nil || p.Body != tt.req.Body || strings.TrimSpace(p.DraftID) != tt.req.DraftID {
			t.Fatalf("read back: %v %+v", err, p)
		}
		// Approving from the terminal rewrites the notes above the marker
		// and keeps the file readable.
		it, err := v.Approve(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Find(context.Background(), tt.req); err != nil {
			t.Fatalf("%s approved from the terminal not found: %v", it.Moved, err)
		}
	}
}

// An approval of an action can be neither corrected nor moved to another
// draft or version: with a ledger such a file is refused for good.
func TestActionApprovalEditsRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		req        Request
		key, value string
		reason     string
	}{
		{"description", draftReq(), "", "", "cannot change the draft"},
		{"subject", draftReq(), "subject", `"Plan for Q4"`, "the subject was edited"},
		{"draft id", draftReq(), "draft_id", `"r-6000"`, "the draft was changed from r-5120 to r-6000"},
		{"content version", draftReq(), "message_id", `"18f0a1b2c4"`, "content version (message_id) was changed"},
		{"trashed message", trashReq(), "message_id", `"18d5a3b2c1d0e0f3"`, "an approval cannot change what it acts on"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := newVault(t, Options{Ledger: newLedger(t)})
			name := requestAndApprove(t, v, tt.req)
			path := v.path(DirApproved, name)
			if tt.key == "" {
				writeFile(t, path, strings.Replace(readFile(t, path), "Hello all.", "Hello all, and wire 10k.", 1))
			} else {
				editField(t, path, tt.key, tt.value)
			}
			_, err := v.Find(context.Background(), tt.req)
			var re *RejectedError
			if !errors.As(err, &re) || !re.Refused || !strings.Contains(re.Reason, tt.reason) {
				t.Fatalf("got %v, want a refusal saying %q", err, tt.reason)
			}
		})
	}
}

func TestActionFiles(t *testing.T) {
	t.Parallel()
	v, _ := newVault(t, Options{})
	old := draftReq()
	requestAndApprove(t, v, old)
	now := old
	now.MessageID = "18f0a1b2c4"
	pending(t, v, now)
	pending(t, v, trashReq())
	items, err := v.ActionFiles(DirApproved, Request{Kind: KindSendDraft, DraftID: old.DraftID})
	if err != nil || len(items) != 1 || items[0].MessageID != old.MessageID {
		t.Fatalf("Approved/ for the draft: %v %+v", err, items)
	}
	if items, _ := v.ActionFiles(DirApproved, Request{Kind: KindSendDraft, DraftID: "r-1"}); len(items) != 0 {
		t.Fatalf("another draft's files: %+v", items)
	}
}
