package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// Send later (issue 27 item 7). A request with a send time (Request.SendAt)
// is approved like any other; the agent's identical call then consumes the
// approval into Done/ as usual, but instead of sending, mailgate keeps the
// email in the store and the Done file says "scheduled" until a server sends
// it at its time. A scheduled file is not an unknown outcome (IsUnsettled):
// nothing was handed to Gmail yet. When a server takes it to send, it first
// writes "sending" (an unknown outcome, which settlement decides if the
// server stops before recording), then the outcome. Withdrawn
// (`mailgate approvals cancel`) or too late, it moves to Rejected/ with the
// reason.

// StatusScheduled is a Done file's status from its claim until a server
// takes it to send; StatusSending from then until its outcome is recorded.
const (
	StatusScheduled = "scheduled"
	StatusSending   = "sending"
)

// sendAtLayout is how a send time is written in a request file and hashed:
// RFC 3339, UTC, to the second.
const sendAtLayout = time.RFC3339

// FormatSendAt is how a send time is written in a request, and bound.
func FormatSendAt(t time.Time) string { return t.UTC().Truncate(time.Second).Format(sendAtLayout) }

// RecordScheduled writes into the claimed Done file that the email is kept
// for sending at at: status scheduled and the claim's hashes, so the file
// is the record of what was approved, and how to withdraw it.
func (c *Claim) RecordScheduled(at time.Time) error {
	a := c.Approval
	what := fmt.Sprintf("Approved and scheduled: mailgate sends this email once at %s (UTC) from whichever mailgate server runs then. "+
		"To withdraw it before then: mailgate approvals cancel %s. Moving this file does nothing.", FormatSendAt(at), strings.TrimSuffix(c.Name, ".md"))
	kvs := []kv{
		{key: "status", value: StatusScheduled},
		{key: "approval_sha256", value: a.SHA256},
		{key: "claimed_at", value: c.ClaimedAt.UTC().Format(time.RFC3339Nano)},
		originalField(a),
		{key: "final_sha256", value: a.Final.SHA256()},
	}
	if a.Final.OutgoingMessageID != "" {
		kvs = append(kvs, kv{key: "outgoing_message_id", value: a.Final.OutgoingMessageID, quoted: true})
	}
	if len(a.Edited) > 0 {
		kvs = append(kvs, kv{key: "edited_by_approver", value: strings.Join(a.Edited, ", "), quoted: true})
	}
	kvs = append(kvs, kv{key: "recorded_at", value: c.v.o.Now().UTC().Format(time.RFC3339Nano)},
		kv{key: "instructions", value: what, quoted: true})
	notes := "> [!info] " + oneLineMD(what) + "\n\n"
	if err := c.v.rewriteFile(c.Path, "mailgate: an approved email kept for sending later (moving this file does nothing).", managedKeys, kvs, notes); err != nil {
		return fmt.Errorf("recording the schedule in %s: %w", c.Name, err)
	}
	return nil
}

// ErrNotScheduled: the Done file is no longer scheduled (sent, being sent,
// or withdrawn meanwhile).
var ErrNotScheduled = errors.New("not a scheduled email (already sent, being sent, or withdrawn)")

// ScheduledClaim is the claim of the scheduled Done file name, for the
// server that sends it: final is the approved email as kept in the store
// (its OutgoingMessageID included). ErrNotScheduled if the file says
// otherwise.
func (v *Vault) ScheduledClaim(name string, final Request, contentSHA256 string) (*Claim, error) {
	f, err := v.doneFields(name)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(strings.TrimSpace(f.Status), StatusScheduled) {
		return nil, fmt.Errorf("Done/%s: %w", name, ErrNotScheduled)
	}
	claimed, _ := parseTime(f.ClaimedAt)
	a := &Approval{Name: name, Kind: final.Kind, SHA256: strings.TrimSpace(f.ApprovalSHA256), ContentSHA256: contentSHA256, Final: final}
	return &Claim{Approval: a, Path: v.path(DirDone, name), Name: name, ClaimedAt: claimed, v: v}, nil
}

// MarkSending writes status sending into a scheduled Done file, just before
// its email is handed to Gmail: from here a stop leaves an unknown outcome,
// which settlement decides from Sent.
func (c *Claim) MarkSending() error {
	what := "Being sent now (it was scheduled). If this line stays, mailgate stopped while sending: the outcome is settled from Sent."
	kvs := []kv{{key: "status", value: StatusSending}, {key: "instructions", value: what, quoted: true}}
	return c.v.rewriteFile(c.Path, "", nil, kvs, "> [!warning] "+oneLineMD(what)+"\n\n")
}

type doneFields struct {
	Status         string `yaml:"status"`
	ClaimedAt      string `yaml:"claimed_at"`
	ApprovalSHA256 string `yaml:"approval_sha256"`
}

func (v *Vault) doneFields(name string) (doneFields, error) {
	var f doneFields
	data, err := v.readOwn(v.path(DirDone, name))
	if errors.Is(err, fs.ErrNotExist) {
		return f, fmt.Errorf("Done/%s: %w", name, ErrNotScheduled)
	}
	if err != nil {
		return f, fmt.Errorf("reading Done/%s: %w", name, err)
	}
	if _, err := parseYAMLFront(data, &f); err != nil {
		return f, fmt.Errorf("reading Done/%s: %w", name, err)
	}
	return f, nil
}

// Unschedule moves the scheduled Done file name into Rejected/ with why
// (withdrawn by the user, or its time long past): the email is never sent.
// It returns the file's name in Rejected/. The caller has already taken the
// email out of the store's schedule, so no server can be sending it.
func (v *Vault) Unschedule(name, why string) (string, error) {
	f, err := v.doneFields(name)
	if err != nil {
		return "", err
	}
	if !strings.EqualFold(strings.TrimSpace(f.Status), StatusScheduled) {
		return "", fmt.Errorf("Done/%s: %w", name, ErrNotScheduled)
	}
	if err := v.markRejected(v.path(DirDone, name), "mailgate (send later)", why); err != nil {
		return "", fmt.Errorf("withdrawing %s: %w", name, err)
	}
	to, err := v.moveUnique(v.path(DirDone, name), DirRejected, name)
	if err != nil {
		return "", fmt.Errorf("withdrawing %s: %w", name, err)
	}
	return to, nil
}
