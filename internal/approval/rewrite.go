package approval

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/atomicfile"
)

// Statuses mailgate writes outside Done/.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected" // moved to Rejected/ by the approver
	StatusRefused  = "refused"  // taken out of Approved/ by mailgate, with a reason
)

// Texts that replace Instructions once a file has left Pending_Approval/,
// so that no file outside it tells anyone to move it to Approved/.
const (
	approvedText = "Approved: the agent's next identical call sends this email once. To withdraw the approval before that, move this file to Rejected/."
	rejectedText = "Rejected by the approver: this email will not be sent, and the agent's identical call is told so."
)

// rewriteFile rewrites a vault file in place, atomically: in the
// frontmatter the earlier values of the drop keys and of every key in kvs
// (with their continuation lines) are removed and kvs appended, except a kv
// marked ifAbsent whose key the file has: that line stays as it was; the first
// comment line becomes comment (when not ""); in a FormatV2 file the notes
// above BodyMarker become notes (when not ""). Every other line, and the
// email body, stay byte for byte.
func (v *Vault) rewriteFile(path, comment string, drop []string, kvs []kv, notes string) error {
	if v.o.FaultWrite != nil {
		if err := v.o.FaultWrite(path); err != nil {
			return err
		}
	}
	data, b, err := v.readBlock(path)
	if err != nil {
		return err
	}
	kept := map[string]bool{} // ifAbsent keys the file has: left as they are
	for _, l := range b.lines {
		if k, err := lineKey(l); err == nil && k != "" && slices.ContainsFunc(kvs, func(f kv) bool { return f.ifAbsent && f.key == k }) {
			kept[k] = true
		}
	}
	kvs = slices.DeleteFunc(slices.Clone(kvs), func(f kv) bool { return kept[f.key] })
	drop = slices.DeleteFunc(slices.Clone(drop), func(k string) bool { return kept[k] })
	for _, f := range kvs {
		drop = append(drop, f.key)
	}
	nl := "\n"
	if bytes.HasSuffix(data[:b.open], []byte("\r\n")) {
		nl = "\r\n"
	}
	var out bytes.Buffer
	out.Write(data[:b.open])
	dropping, commented := false, comment == ""
	for _, l := range b.lines {
		k, err := lineKey(l)
		if err != nil {
			return err
		}
		if k != "" {
			dropping = slices.Contains(drop, k)
		}
		if !commented && k == "" && bytes.HasPrefix(l, []byte("# mailgate")) {
			out.WriteString("# " + comment + nl)
			commented = true
			continue
		}
		if !dropping {
			out.Write(l)
		}
	}
	for _, f := range kvs {
		out.WriteString(strings.ReplaceAll(f.line(), "\n", nl))
	}
	closingStart := b.open
	for _, l := range b.lines {
		closingStart += len(l)
	}
	out.Write(data[closingStart:b.end])
	rest := data[b.end:]
	if p, err := parseApproval(data); err == nil && notes != "" && strings.TrimSpace(p.Format) == FormatV2 {
		if old, _, ok := splitAtMarker(rest, markerFor(Kind(strings.TrimSpace(p.Type)))); ok {
			// The blank separator line, the new notes, then the marker line
			// and the body as they were.
			out.WriteString(nl)
			out.WriteString(strings.ReplaceAll(notes, "\n", nl))
			rest = rest[len(old):]
		}
	}
	out.Write(rest)
	if _, err := parseApproval(out.Bytes()); err != nil {
		return fmt.Errorf("rewriting frontmatter: %w", err)
	}
	return atomicfile.WriteFile(path, out.Bytes(), 0o600)
}

// readBlock reads a file mailgate rewrites (without a byte order mark,
// which a rewrite drops) and finds its frontmatter.
func (v *Vault) readBlock(path string) ([]byte, fmBlock, error) {
	data, err := v.readOwn(path)
	if err != nil {
		return nil, fmBlock{}, err
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	b, err := findBlock(data)
	return data, b, err
}

// markRejected makes a file in Rejected/ say so: status rejected, when, how
// (via) and, when the approver gave one, why (reason, which the agent is
// told), and no instruction to approve it.
func (v *Vault) markRejected(path, via, reason string) error {
	kvs := []kv{
		{key: "status", value: StatusRejected},
		{key: "rejected_at", value: v.o.Now().UTC().Format(time.RFC3339)},
		{key: "instructions", value: rejectedText, quoted: true},
	}
	if via != "" {
		kvs = append(kvs, kv{key: "decided_via", value: via, quoted: true})
	}
	if reason != "" {
		kvs = append(kvs, kv{key: "reason", value: reason, quoted: true})
	}
	notes := notesBlock(v.fileWarnings(path), "> [!failure] "+rejectedText)
	if reason != "" {
		notes += "The approver's reason: " + oneLineMD(reason) + "\n\n"
	}
	return v.rewriteFile(path, "mailgate: a rejected request (it will not be sent).", nil, kvs, notes)
}

// markApproved makes a request a tool approves say so, and through which
// tool (via).
func (v *Vault) markApproved(path, via string) error {
	kvs := []kv{
		{key: "status", value: StatusApproved},
		{key: "approved_at", value: v.o.Now().UTC().Format(time.RFC3339)},
		{key: "instructions", value: approvedText, quoted: true},
		{key: "decided_via", value: via, quoted: true},
	}
	notes := notesBlock(v.fileWarnings(path), "> [!success] "+approvedText)
	return v.rewriteFile(path, "mailgate approval request, approved: read the notes and the email below.", []string{"reason", "rejected_at"}, kvs, notes)
}

// fileWarnings reads the warnings a request file was written with (none
// when it cannot be read), so its notes can be redrawn around a new status.
func (v *Vault) fileWarnings(path string) []string {
	data, err := v.readOwn(path)
	if err != nil {
		return nil
	}
	var f extraFields
	if _, err := parseYAMLFront(bytes.TrimPrefix(data, utf8BOM), &f); err != nil {
		return nil
	}
	return f.Warnings
}

// refuse takes an approval the gate must not honour out of Approved/ into
// Rejected/ (renamed, never replacing anything), then writes status refused
// and the reason into it. Of several processes refusing one file, one moves
// it; the others answer with the same reason.
func (v *Vault) refuse(r refusal) (*RejectedError, error) {
	name := r.name
	for attempt := 1; ; attempt++ {
		err := atomicfile.RenameNoReplace(v.path(DirApproved, r.name), v.path(DirRejected, name))
		if err == nil {
			break
		}
		if errors.Is(err, fs.ErrNotExist) {
			return &RejectedError{Name: r.name, Reason: r.reason, Refused: true}, nil
		}
		if !isExist(err) || attempt == 10 {
			return nil, fmt.Errorf("refusing %s: %w", r.name, err)
		}
		name = fmt.Sprintf("%s-refused-%d.md", strings.TrimSuffix(r.name, ".md"), attempt)
	}
	text := "Refused by mailgate, nothing was sent: " + r.reason + ". Ask the agent for a new email if one is wanted."
	kvs := []kv{
		{key: "status", value: StatusRefused},
		{key: "refused_at", value: v.o.Now().UTC().Format(time.RFC3339)},
		{key: "reason", value: r.reason, quoted: true},
		{key: "instructions", value: text, quoted: true},
	}
	notes := "> [!failure] " + oneLineMD(text) + "\n\n"
	if err := v.rewriteFile(v.path(DirRejected, name), "mailgate: a refused approval (it will not be sent).", nil, kvs, notes); err != nil {
		// The move is what matters; the file still says why in the agent's
		// answer and the audit log.
		return &RejectedError{Name: name, Reason: r.reason, Refused: true}, nil
	}
	return &RejectedError{Name: name, Reason: r.reason, Refused: true}, nil
}
