package approval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mailgate/mailgate/internal/mailmsg"
)

// The HTML part's bytes, for showing the email as the recipient sees it
// (the local approval page). A request file binds the HTML part by its
// SHA-256 (html_sha256) and says where it came from (html_from), but holds
// only the text the approver reads:
//
//   - rendered from the Markdown body (html_from: markdown), the HTML is
//     rendered again from the file's body: the renderer is deterministic,
//     and what the gate sends is rendered from the approved body the same
//     way (a corrected body included);
//   - written in HTML by the agent (html_from: html), the sanitized HTML
//     that is sent is kept when the request is written, in
//     Logs/html/<html_sha256>.html: named by its hash, so one file serves
//     every copy of the request, and checked against that hash before it
//     is shown (a file that does not hash to its name is not shown).
//
// The kept file is never what is sent: the gate renders the agent's HTML
// again on the approved call and checks it against html_sha256.

// DirHTML is the folder, under Logs/, of the kept HTML parts.
const DirHTML = "html"

// HTMLSource says how HTMLPart found the HTML it returns.
type HTMLSource string

const (
	HTMLRendered  HTMLSource = "Rendered from the Markdown body"
	HTMLCorrected HTMLSource = "Rendered from the corrected Markdown body (what is sent)"
	HTMLKept      HTMLSource = "As written by the agent and sanitized (kept when the request was written)"
)

// ErrNoHTML: the request has no HTML part, or its bytes are not available
// (an agent-written HTML part of a request written before they were kept).
var ErrNoHTML = errors.New("the HTML part is not available")

// htmlSHA256 is how mailmsg.Digest hashes an HTML part.
func htmlSHA256(html string) string { return sum([]byte(normalizeNewlines(html))) }

// keepHTML stores an agent-written HTML part under its hash (once).
func (v *Vault) keepHTML(html, sha string) error {
	if html == "" || !isHex(sha) || !strings.EqualFold(htmlSHA256(html), sha) {
		return nil // nothing to keep, or not the part bound: never kept under a wrong name
	}
	return v.keep(keptHTML, strings.ToLower(sha), []byte(html))
}

// HTMLPart returns the HTML part it's request sends, and how it was found.
func (v *Vault) HTMLPart(it *Item) (string, HTMLSource, error) {
	sha := strings.ToLower(strings.TrimSpace(it.HTMLSHA256))
	if sha == "" {
		return "", "", ErrNoHTML
	}
	if mailmsg.BodyFormat(it.HTMLFrom) == mailmsg.FormatMarkdown {
		parts, err := mailmsg.RenderBody(mailmsg.FormatMarkdown, normalizeNewlines(it.Body))
		if err != nil {
			return "", "", fmt.Errorf("rendering the Markdown body: %w", err)
		}
		if htmlSHA256(parts.HTML) == sha {
			return parts.HTML, HTMLRendered, nil
		}
		return parts.HTML, HTMLCorrected, nil
	}
	if !isHex(sha) {
		return "", "", ErrNoHTML
	}
	data, err := v.readKept(keptHTML, sha)
	if err != nil {
		return "", "", err
	}
	return string(data), HTMLKept, nil
}
