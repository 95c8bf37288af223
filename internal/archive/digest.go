package archive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mailgate/mailgate/internal/filelock"
	"github.com/mailgate/mailgate/internal/outbox"
)

// The thread digest is every message of an agent thread in one file,
// oldest first. Each entry sits between markers carrying its id and
// creation time, so adding a message is a merge of entries (under a lock
// shared by all processes) rather than an append: a repeat replaces its
// entry, and an entry written late still lands in its place.

// Markers are HTML comments starting "<!-- am:". Nothing an agent wrote
// may produce one: every "<!--" in agent text (body, subject, names) is
// written as "&lt;!--", which Markdown shows as the "<!--" the agent typed
// and which no marker search matches. Without it a body holding
// "<!-- am:end N -->" and a start marker became a separate, back-dated
// entry "from" another agent. The message file keeps the body unchanged.
func escapeMarkers(s string) string { return strings.ReplaceAll(s, "<!--", "&lt;!--") }

var entryStart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^<!-- am:message id=(\d+) created=(\S+) -->\n`) })

func endMarker(id int64) string { return fmt.Sprintf("<!-- am:end %d -->\n", id) }

type entry struct {
	id      int64
	created string // agentmail.TSLayout: fixed width, so it sorts as text
	text    string // from start marker to end marker, inclusive
}

func (a *Archive) addToDigest(m *outbox.Message) error {
	path := a.ThreadPath(m)
	unlock, err := filelock.Lock(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	entries := parseEntries(string(old))
	e := renderEntry(m)
	replaced := false
	for i := range entries {
		if entries[i].id == e.id {
			entries[i], replaced = e, true
		}
	}
	if !replaced {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].created != entries[j].created {
			return entries[i].created < entries[j].created
		}
		return entries[i].id < entries[j].id
	})
	var b strings.Builder
	fmt.Fprintf(&b, "# Agent thread %s (%s)\n\n%d message(s), oldest first. Written by mailgate; edits are overwritten.\n\n",
		escapeMarkers(oneLine(m.ThreadKey)), escapeMarkers(oneLine(m.ProjectSlug)), len(entries))
	for _, e := range entries {
		b.WriteString(e.text)
		b.WriteString("\n")
	}
	return writeAtomic(path, []byte(b.String()))
}

func renderEntry(m *outbox.Message) entry {
	r := record(m)
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- am:message id=%d created=%s -->\n", m.ID, r.CreatedTS)
	fmt.Fprintf(&b, "## %s — %s\n\n", escapeMarkers(oneLine(m.Subject)), m.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(&b, "**From** %s **to** %s", escapeMarkers(oneLine(m.From)), escapeMarkers(oneLine(strings.Join(m.To, ", "))))
	if len(m.CC) > 0 {
		fmt.Fprintf(&b, " **cc** %s", escapeMarkers(oneLine(strings.Join(m.CC, ", "))))
	}
	fmt.Fprintf(&b, " · #%d · %s", m.ID, m.Importance)
	if m.AckRequired {
		b.WriteString(" · ack required")
	}
	b.WriteString("\n\n")
	b.WriteString(escapeMarkers(strings.TrimRight(m.BodyMD, "\n")))
	b.WriteString("\n\n")
	b.WriteString(endMarker(m.ID))
	return entry{id: m.ID, created: r.CreatedTS, text: b.String()}
}

// parseEntries finds the entries of a digest; text outside them (the
// header) is dropped and regenerated.
func parseEntries(s string) []entry {
	var out []entry
	locs := entryStart().FindAllStringSubmatchIndex(s, -1)
	for _, l := range locs {
		id, err := strconv.ParseInt(s[l[2]:l[3]], 10, 64)
		if err != nil {
			continue
		}
		end := strings.Index(s[l[0]:], endMarker(id))
		if end < 0 {
			continue // damaged by hand: the entry comes back when its message is archived again
		}
		out = append(out, entry{id: id, created: s[l[4]:l[5]], text: s[l[0] : l[0]+end+len(endMarker(id))]})
	}
	return out
}

// DigestEntry is one entry of a digest as read back.
type DigestEntry struct {
	ID      int64
	Created string
	From    string
}

var fromLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\*\*From\*\* (.*?) \*\*to\*\*`) })

// ParseDigest lists the entries of a digest in file order, with the
// sender each one names.
func ParseDigest(data []byte) []DigestEntry {
	var out []DigestEntry
	for _, e := range parseEntries(string(data)) {
		d := DigestEntry{ID: e.id, Created: e.created}
		if m := fromLine().FindStringSubmatch(e.text); m != nil {
			d.From = m[1]
		}
		out = append(out, d)
	}
	return out
}

// DigestIDs lists the message ids of a digest in file order.
func DigestIDs(data []byte) []int64 {
	var ids []int64
	for _, e := range parseEntries(string(data)) {
		ids = append(ids, e.id)
	}
	return ids
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
