package approval

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/atomicfile"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// Deciding a request from a tool (mailgate approvals, the local approval
// page): the same move a human makes in a file manager, made safe against
// every other decider. Of two deciders racing on one file (two browser
// tabs, the page and a terminal, the page and a file manager) exactly one
// wins, by the one atomic step that decides: the file is first renamed out
// of its folder to a hidden name of the decider's own (which every reader
// skips), then marked (and corrected) there, then renamed into its new
// folder. The loser's rename finds no file and is told where it went
// (*DecidedError). The file is never rewritten in a folder the gate reads
// while someone else may move it, so a decision cannot resurrect a file
// another decider (or the gate's claim) already moved.
//
// A process killed between the renames leaves the hidden file, whose name
// says when it was taken, what state the decision reached and the
// request's own name (holdName). SweepTemp recovers it once it is older
// than any live decision (recover.go): a file not yet marked goes back
// where it was, undecided; a marked one finishes its move (the human's
// decision was whole, only its last rename was lost).

// Ways a decision is made, written into the file (decided_via) and said in
// the audit log.
const (
	ViaTerminal = "mailgate approvals"
	ViaPage     = "the local approval page (mailgate approvals --web)"
	ViaElicit   = "the MCP client's question (APPROVAL_ELICIT)"
)

// Decision is what a decider says besides the move.
type Decision struct {
	// Via is where the decision was made (ViaTerminal, ViaPage, …).
	Via string
	// Reason is the approver's reason for a rejection: written into the
	// file's reason, and told to the agent on its next identical call.
	Reason string
	// Subject and Body, when not nil, correct the email before it is
	// approved (the approved file is what is sent). Not for actions.
	Subject, Body *string
	// FileSHA256, when set, is the hash of the file as the human saw it: a
	// file changed since (by an agent, an editor) is not decided.
	FileSHA256 string
	// From, when set, is the one folder the request is taken from (the
	// folder the human saw it in): a request moved elsewhere meanwhile is
	// someone else's decision, not a change of mind.
	From string
}

// ErrDecided is wrapped by *DecidedError.
var ErrDecided = errors.New("the request was decided or moved by someone else first")

// DecidedError says a decision lost its race: the file had left its folder
// (or changed) when this decider came to take it.
type DecidedError struct {
	Name string
	// Now is where the request is now ("Approved/<name>"), "" when it is
	// nowhere to be seen (claimed and being sent, or deleted).
	Now string
	// Changed: the file was still there but not as the human saw it.
	Changed bool
}

func (e *DecidedError) Error() string {
	if e.Changed {
		return fmt.Sprintf("%s changed since it was shown (edited by someone else); nothing was decided: look at it again", e.Name)
	}
	if e.Now != "" {
		return fmt.Sprintf("%s: %v: it is now %s", e.Name, ErrDecided, e.Now)
	}
	return fmt.Sprintf("%s: %v: it is no longer in its folder", e.Name, ErrDecided)
}

func (e *DecidedError) Unwrap() error { return ErrDecided }

// ApproveAs is Approve with the decider's details: where it was made, and
// the corrections to the subject or body it makes first.
func (v *Vault) ApproveAs(id string, d Decision) (*Item, error) {
	return v.decide(id, DirApproved, d, DirPending, DirRejected)
}

// RejectAs is Reject with the decider's details: where it was made and
// the reason the agent is told.
func (v *Vault) RejectAs(id string, d Decision) (*Item, error) {
	return v.decide(id, DirRejected, d, DirPending, DirApproved)
}

func (v *Vault) decide(id, to string, d Decision, from ...string) (*Item, error) {
	verb := map[string]string{DirApproved: "approving", DirRejected: "rejecting"}[to]
	if d.From != "" {
		if !slices.Contains(from, d.From) {
			return nil, fmt.Errorf("%s: a request in %s/ cannot be moved to %s/", verb, d.From, to)
		}
		from = []string{d.From}
	}
	it, err := v.Resolve(id, from...)
	if err != nil && d.From != "" && errors.Is(err, ErrUnknownID) {
		// The decider saw it there: it was taken (or is being decided).
		de := &DecidedError{Name: id}
		if other, oerr := v.Resolve(id); oerr == nil {
			de.Name, de.Now = other.Name, other.Folder+"/"+other.Name
		}
		return nil, fmt.Errorf("%s: %w", verb, de)
	}
	if err != nil {
		var ie *IDError
		if errors.As(err, &ie) && errors.Is(err, ErrUnknownID) {
			// Say where it is, if it is somewhere else.
			if other, oerr := v.Resolve(id); oerr == nil {
				ie.Note = fmt.Sprintf("%s/%s cannot be moved to %s/", other.Folder, other.Name, to)
				if other.Folder == DirDone {
					ie.Note += " (it was already used)"
				}
			}
		}
		return nil, fmt.Errorf("%s: %w", verb, err)
	}
	if to == DirApproved && it.Expired(v.o.Now()) {
		return nil, fmt.Errorf("%s %s: it expired at %s and would be ignored; ask the agent to send again for a fresh request",
			verb, it.Name, it.Expires.UTC().Format(time.RFC3339))
	}
	if to == DirApproved && it.Status == StatusRefused {
		return nil, fmt.Errorf("%s %s: mailgate refused it (%s); ask the agent for a new email instead", verb, it.Name, it.Reason)
	}
	if d.Subject != nil || d.Body != nil {
		if err := checkCorrection(it, d); err != nil {
			return nil, fmt.Errorf("%s %s: %w", verb, it.Name, err)
		}
	}
	// Take the file: the rename that decides between deciders.
	dir, taken, tag := filepath.Dir(it.Path), v.o.Now(), randomHex(4)
	held := filepath.Join(dir, holdName(taken, tag, holdHeld, it.Name))
	if err := atomicfile.RenameNoReplace(it.Path, held); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", verb, v.whereNow(it))
		}
		return nil, fmt.Errorf("%s %s: %w", verb, it.Name, err)
	}
	decideStep(holdHeld)
	putBack := func() {
		if atomicfile.RenameNoReplace(held, it.Path) != nil {
			// Its name was taken meanwhile: keep it visible under another.
			_ = atomicfile.RenameNoReplace(held, strings.TrimSuffix(it.Path, ".md")+"-"+randomHex(2)+".md")
		}
	}
	if d.FileSHA256 != "" {
		data, err := v.readOwn(held)
		if err != nil || !strings.EqualFold(sum(data), d.FileSHA256) {
			putBack()
			return nil, fmt.Errorf("%s: %w", verb, &DecidedError{Name: it.Name, Changed: true})
		}
	}
	if d.Subject != nil || d.Body != nil {
		if err := v.correct(held, d.Subject, d.Body); err != nil {
			putBack()
			return nil, fmt.Errorf("%s %s: %w", verb, it.Name, err)
		}
	}
	// The file says what it is before it moves, so it never tells a
	// falsehood where it lands.
	var merr error
	if to == DirRejected {
		merr = v.markRejected(held, "rejected with "+viaOr(d.Via), d.Reason)
	} else {
		merr = v.markApproved(held, viaOr(d.Via))
	}
	if merr != nil {
		putBack()
		return nil, fmt.Errorf("%s %s: %w", verb, it.Name, merr)
	}
	// The decision is whole: its hidden name says so, so a crash from here
	// on is finished by the recovery, not undone.
	marked := filepath.Join(dir, holdName(taken, tag, to, it.Name))
	if err := atomicfile.RenameNoReplace(held, marked); err != nil {
		putBack()
		return nil, fmt.Errorf("%s %s: %w", verb, it.Name, err)
	}
	held = marked
	decideStep(to)
	name, err := v.moveUnique(held, to, it.Name)
	if err != nil {
		putBack()
		return nil, fmt.Errorf("moving %s/%s to %s/: %w", it.Folder, it.Name, to, err)
	}
	it.Moved = name
	return it, nil
}

func viaOr(via string) string {
	if via == "" {
		return ViaTerminal
	}
	return via
}

// whereNow says where a request went that a decider found gone.
func (v *Vault) whereNow(it *Item) *DecidedError {
	e := &DecidedError{Name: it.Name}
	id := it.RequestID
	if id == "" {
		id = strings.TrimSuffix(it.Name, ".md")
	}
	if other, err := v.Resolve(id); err == nil {
		e.Now = other.Folder + "/" + other.Name
	}
	return e
}

// checkCorrection refuses a correction the gate could not honour: of an
// action (its content is Gmail's), of the body of an email written in HTML
// (its HTML part would not follow), or one no email may carry.
func checkCorrection(it *Item, d Decision) error {
	if it.Kind.IsAction() {
		return errors.New("the content of this request is Gmail's and cannot be corrected here")
	}
	if d.Body != nil && normalizeNewlines(*d.Body) != normalizeNewlines(it.Body) && mailmsg.BodyFormat(it.HTMLFrom) == mailmsg.FormatHTML {
		return errors.New("the body of an email written in HTML cannot be corrected (its HTML part would not follow): reject it and ask for a new one")
	}
	if d.Subject != nil {
		if err := mailmsg.CheckHeaderValue("subject", *d.Subject); err != nil {
			return err
		}
		if len(*d.Subject) > mailmsg.MaxSubjectBytes {
			return fmt.Errorf("the subject is longer than %d bytes", mailmsg.MaxSubjectBytes)
		}
	}
	if d.Body != nil {
		if !utf8.ValidString(*d.Body) {
			return errors.New("the body is not valid UTF-8")
		}
		if len(*d.Body) > mailmsg.MaxBodyBytes {
			return fmt.Errorf("the body is larger than %d bytes", mailmsg.MaxBodyBytes)
		}
	}
	return nil
}

// correct writes the approver's subject and body into the file at path:
// the subject field is replaced, the body after the BodyMarker line (and
// its blank line) is replaced, everything else stays.
func (v *Vault) correct(path string, subject, body *string) error {
	if subject != nil {
		if err := v.rewriteFile(path, "", nil, []kv{{key: "subject", value: *subject, quoted: true}}, ""); err != nil {
			return fmt.Errorf("correcting the subject: %w", err)
		}
	}
	if body == nil {
		return nil
	}
	data, b, err := v.readBlock(path)
	if err != nil {
		return err
	}
	p, err := parseApproval(data)
	if err != nil {
		return err
	}
	if normalizeNewlines(*body) == p.Body {
		return nil
	}
	head, rest := data[:b.end], data[b.end:]
	var out bytes.Buffer
	out.Write(head)
	if strings.TrimSpace(p.Format) == FormatV2 {
		notes, after, ok := splitAtMarker(rest, markerFor(Kind(strings.TrimSpace(p.Type))))
		if !ok {
			return errors.New("correcting the body: the body marker is missing")
		}
		out.Write(rest[:len(rest)-len(after)]) // the notes and the marker line
		_ = notes
		rest = after
	}
	out.Write(rest[:len(rest)-len(stripSeparator(rest))]) // the blank separator line
	out.WriteString(*body)
	np, err := parseApproval(out.Bytes())
	if err != nil || np.Body != normalizeNewlines(*body) {
		return fmt.Errorf("correcting the body: the file would not read back as written (%v)", err)
	}
	return atomicfile.WriteFile(path, out.Bytes(), 0o600)
}
