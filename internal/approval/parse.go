package approval

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"
)

// yamlOnly is the one frontmatter format a vault file may use. The
// library's defaults would also take TOML (+++) and JSON front matter, and
// its TOML parser (BurntSushi/toml v0.3.1) can panic on malformed input: a
// file anyone can edit must never reach it.
var yamlOnly = frontmatter.NewFormat("---", "---", yaml.Unmarshal)

// parseYAMLFront parses data's YAML front matter into v and returns the
// rest; a file without one is an error.
func parseYAMLFront(data []byte, v any) ([]byte, error) {
	return frontmatter.MustParse(bytes.NewReader(data), v, yamlOnly)
}

// fields are the frontmatter keys mailgate reads. Unknown keys are ignored;
// every value is read as its literal text, so `to: 12345` or an unquoted
// date stays a string.
type fields struct {
	Type          string   `yaml:"type"`
	Status        string   `yaml:"status"`
	RequestID     string   `yaml:"request_id"`
	OutgoingMsgID string   `yaml:"outgoing_message_id"`
	Account       string   `yaml:"account"`
	From          string   `yaml:"from"`
	SendAt        string   `yaml:"send_at"`
	To            addrList `yaml:"to"`
	Cc            addrList `yaml:"cc"`
	Bcc           addrList `yaml:"bcc"`
	ThreadID      string   `yaml:"thread_id"`
	MessageID     string   `yaml:"message_id"`
	DraftID       string   `yaml:"draft_id"` // send_draft (kind_action.go)
	Target        string   `yaml:"target"`   // the settings kinds (kind_settings.go)
	Subject       string   `yaml:"subject"`
	Created       string   `yaml:"created"`
	Expires       string   `yaml:"expires"`
	ContentSHA256 string   `yaml:"content_sha256"`
	Format        string   `yaml:"format"`
	Reason        string   `yaml:"reason"`
	HTMLSHA256    string   `yaml:"html_sha256"`
	HTMLFrom      string   `yaml:"html_from"`
	HTMLLinks     []string `yaml:"html_links"`
	Attachments   []string `yaml:"attachments"`
}

// addrList is a recipient field: one address as a scalar (`to: a@b.c`, as
// every file had before lists existed) or a block list of them.
type addrList []string

func (l *addrList) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err == nil {
		if strings.TrimSpace(s) != "" {
			*l = addrList{s}
		}
		return nil
	}
	var list []string
	if err := unmarshal(&list); err != nil {
		return err
	}
	*l = list
	return nil
}

// one returns the field as one value: "" when empty, the address when it
// holds one, else the addresses joined (which no single-address parse
// accepts).
func (l addrList) one() string {
	return strings.TrimSpace(strings.Join(l, ", "))
}

// parsedFile is an approval file as read from disk.
type parsedFile struct {
	fields
	// Body is the email body with line endings normalised to LF: in a
	// FormatV2 file what follows the BodyMarker line and one blank line,
	// else everything after the frontmatter minus the one blank line that
	// separates them.
	Body string
	// Notes is a FormatV2 file's body area above the BodyMarker line.
	Notes string
	// RawBody is Body before line endings were normalised, for showing
	// the human what the file holds (a lone CR included).
	RawBody string
}

var utf8BOM = []byte("\xef\xbb\xbf")

var errNoFrontmatter = errors.New("no YAML frontmatter")

// block locates the frontmatter of data (BOM already removed): the opening
// "---" line, the lines between, and the offset just past the closing
// "---" line. Blank lines before the opening delimiter are allowed, as the
// frontmatter library allows them. It mirrors the library's delimiter rule
// (a line that is "---" once surrounding white space is trimmed).
type fmBlock struct {
	open  int      // offset just past the opening delimiter line
	lines [][]byte // raw lines between the delimiters, each with its line ending
	end   int      // offset just past the closing delimiter line
}

func findBlock(data []byte) (fmBlock, error) {
	var b fmBlock
	off, opened := 0, false
	for off < len(data) {
		next := bytes.IndexByte(data[off:], '\n')
		lineEnd := len(data)
		if next >= 0 {
			lineEnd = off + next + 1
		}
		line := data[off:lineEnd]
		trimmed := bytes.TrimSpace(line)
		switch {
		case !opened && len(trimmed) == 0:
		case !opened && string(trimmed) == "---":
			opened, b.open = true, lineEnd
		case !opened:
			return b, errNoFrontmatter
		case string(trimmed) == "---":
			b.end = lineEnd
			return b, nil
		default:
			b.lines = append(b.lines, line)
		}
		off = lineEnd
	}
	return b, errNoFrontmatter
}

// topKey matches a top-level mapping key at the start of a line.
var topKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_][A-Za-z0-9_.\- ]*?))[ \t]*:(?:[ \t]|\r?\n|$)`)
})

// lineKey returns the top-level key a frontmatter line starts, or "" for a
// continuation line (indented, a "- " item, a comment or blank). Any other
// line is an error: only the plain `key: value` shape editors write is
// accepted, so the duplicate-key check below cannot be sidestepped with flow
// mappings, anchors or complex keys.
func lineKey(line []byte) (string, error) {
	t := bytes.TrimRight(line, "\r\n")
	switch {
	case len(bytes.TrimSpace(t)) == 0, t[0] == ' ', t[0] == '\t', t[0] == '#',
		t[0] == '-' && (len(t) == 1 || t[1] == ' '):
		return "", nil
	}
	m := topKey().FindSubmatchIndex(line)
	if m == nil {
		return "", fmt.Errorf("unsupported frontmatter line %q", truncateForError(t))
	}
	// Anchors, aliases and tags would let the parsed value differ from the
	// text a human reads.
	if v := bytes.TrimSpace(line[m[1]:]); len(v) > 0 && (v[0] == '&' || v[0] == '*' || v[0] == '!') {
		return "", fmt.Errorf("anchors, aliases and tags are not allowed in %q", truncateForError(t))
	}
	var key []byte
	for i := 2; i < 8; i += 2 {
		if m[i] >= 0 {
			key = line[m[i]:m[i+1]]
		}
	}
	return string(key), nil
}

// parseApproval parses an approval or request file. It never panics on
// arbitrary input. It refuses files without a YAML frontmatter, with a
// duplicated key (a human would read one value and mailgate another), or
// where the library's idea of the frontmatter differs from findBlock's.
func parseApproval(data []byte) (*parsedFile, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	b, err := findBlock(data)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(b.lines))
	for _, l := range b.lines {
		k, err := lineKey(l)
		if err != nil {
			return nil, err
		}
		if k == "" {
			continue
		}
		if seen[k] {
			return nil, fmt.Errorf("duplicate frontmatter key %q", k)
		}
		seen[k] = true
	}
	var p parsedFile
	rest, err := parseYAMLFront(data, &p.fields)
	if err != nil {
		return nil, fmt.Errorf("parsing frontmatter: %w", err)
	}
	if !bytes.Equal(rest, data[b.end:]) {
		return nil, fmt.Errorf("ambiguous frontmatter boundary")
	}
	if strings.TrimSpace(p.Format) == FormatV2 {
		marker := markerFor(Kind(strings.TrimSpace(p.Type)))
		notes, body, ok := splitAtMarker(rest, marker)
		if !ok {
			return nil, fmt.Errorf("the line %q that starts the email body is missing", marker)
		}
		p.Notes = string(notes)
		rest = body
	}
	p.RawBody = string(stripSeparator(rest))
	p.Body = normalizeNewlines(p.RawBody)
	return &p, nil
}

// splitAtMarker splits a FormatV2 body area at the first line that is
// exactly BodyMarker (any line ending): the notes before it, and what
// follows the marker line. The first such line counts, so an email body
// holding the marker line itself cannot move the boundary: mailgate's notes
// come first.
func splitAtMarker(area []byte, marker string) (notes, body []byte, ok bool) {
	off := 0
	for off <= len(area) {
		next := bytes.IndexByte(area[off:], '\n')
		end := len(area)
		if next >= 0 {
			end = off + next + 1
		}
		line := bytes.TrimRight(area[off:end], "\r\n")
		if string(line) == marker {
			return area[:off], area[end:], true
		}
		if next < 0 {
			break
		}
		off = end
	}
	return nil, nil, false
}

// stripSeparator removes the one blank line mailgate writes between the
// frontmatter and the body.
func stripSeparator(rest []byte) []byte {
	switch {
	case bytes.HasPrefix(rest, []byte("\r\n")):
		return rest[2:]
	case bytes.HasPrefix(rest, []byte("\n")), bytes.HasPrefix(rest, []byte("\r")):
		return rest[1:]
	}
	return rest
}

// parseTime reads an `expires` or `created` value: RFC 3339 (with or without
// fractional seconds), the same with a space for "T" or without a zone (read
// as UTC), or a bare date, which means the end of that day, UTC.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t.Add(24*time.Hour - time.Nanosecond), nil
	}
	return time.Time{}, fmt.Errorf("unparsable time %q", truncateForError([]byte(s)))
}

func truncateForError(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// first returns the first address of the field ("" when empty).
func (l addrList) first() string {
	if len(l) == 0 {
		return ""
	}
	return strings.TrimSpace(l[0])
}
