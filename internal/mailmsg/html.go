package mailmsg

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// A body given by an agent may be plain text, Markdown or HTML. Markdown
// and HTML both leave with a text alternative, and whatever HTML leaves
// went through one sanitizer: the agent writing it may be steered by a
// stranger's email, and the HTML part is what the approver does not read
// line by line (they read the text part and are told an HTML part goes
// too), so it must not be able to carry scripts, event handlers, forms,
// iframes or remote styles that the text part does not show.
//
//   - Markdown is rendered by goldmark (CommonMark + GitHub tables,
//     strikethrough, autolinks) with its default of raw HTML off: an inline
//     <script> becomes "<!-- raw HTML omitted -->" and javascript:/data:
//     links are dropped. The text part is the Markdown as written, which
//     reads well as text. The HTML is then also run through the sanitizer,
//     so the guarantee does not rest on the renderer's defaults.
//   - HTML given directly is sanitized with the email-HTML policy
//     (html_policy.go: links, tables, formatting; no images, no direction
//     changes, nothing hidden or struck, no script, style, form or on*
//     attributes; only http, https and mailto URLs), and the text part is
//     derived from the sanitized HTML with HTMLToText (a tokenizer over
//     golang.org/x/net/html: no html→text library is available on the
//     module proxy here, and the one in this package already reads mail).

// BodyFormat says how to read a body an agent wrote.
type BodyFormat string

// Body formats accepted by RenderBody.
const (
	FormatText     BodyFormat = "text"
	FormatMarkdown BodyFormat = "markdown"
	FormatHTML     BodyFormat = "html"
)

// ErrBodyFormat is wrapped by RenderBody's error for an unknown format.
var ErrBodyFormat = errors.New("unknown body format")

// Parts is a body ready for Outgoing: Text always, HTML when the format has
// an HTML part.
type Parts struct {
	Text string
	HTML string
}

// The renderer and the sanitizer are built on first use, not at package
// initialisation: every process that links this package (every mailgate
// command, the agent-mail servers included) would otherwise pay for them at
// start (GODEBUG=inittrace=1: 0.3–0.9 ms).
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		// One line break in the source is one in the mail, as in the text
		// part; people do not write email expecting lines to be joined.
		goldmark.WithRendererOptions(gmhtml.WithHardWraps()),
	)
})

// RenderBody turns body, written in format ("" means text), into the parts
// to send.
func RenderBody(format BodyFormat, body string) (Parts, error) {
	if !utf8.ValidString(body) {
		return Parts{}, errors.New("invalid body: not valid UTF-8")
	}
	switch format {
	case "", FormatText:
		return Parts{Text: body}, nil
	case FormatMarkdown:
		var buf bytes.Buffer
		if err := markdown().Convert([]byte(body), &buf); err != nil {
			return Parts{}, fmt.Errorf("rendering markdown: %w", err)
		}
		// A Markdown image renders as <img>: refused like one in HTML.
		if err := checkNoMedia(buf.String()); err != nil {
			return Parts{}, err
		}
		return Parts{Text: body, HTML: SanitizeHTML(buf.String())}, nil
	case FormatHTML:
		if err := checkNoMedia(body); err != nil {
			return Parts{}, err
		}
		h := SanitizeHTML(body)
		return Parts{Text: HTMLToText(h), HTML: h}, nil
	}
	return Parts{}, fmt.Errorf("%w %q: want text, markdown or html", ErrBodyFormat, format)
}

// SanitizeHTML returns html with everything the email-HTML policy does not
// allow removed (emailHTMLPolicy).
func SanitizeHTML(html string) string {
	return htmlPolicy().Sanitize(html)
}
