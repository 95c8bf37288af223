package mailmsg

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The email-HTML policy: what an HTML part mailgate sends may hold. The
// approver reads text (the Markdown as written, or the text derived from
// the agent's HTML), so the HTML must not be able to show the recipient
// anything that text does not say:
//
//   - no images or other media: a remote image is fetched by the
//     recipient's client from an address the agent chose, and whatever the
//     address carries (?d=<the data>) leaves to that server. A body with
//     one is refused (ErrRemoteContent), not silently changed, so the agent
//     and the approver never believe an image goes when it does not;
//   - no dir attribute, no bdo or bdi: direction changes reorder what the
//     recipient sees (an IBAN shown reversed) while the text reads in
//     order. The tags are dropped and their text kept, in reading order;
//   - nothing a client hides or strikes: no style (element or attribute),
//     hidden, del, s, strike, details; no class or id either (a client's
//     own stylesheet could hide by them). Tags dropped, text kept visible;
//   - no forms, scripts, iframes, objects, event handlers; only http, https
//     and mailto links, whose every target is listed to the approver
//     (HTMLLinks).
//
// Markdown goes through the same policy after goldmark renders it.
func emailHTMLPolicy() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowStandardURLs() // parseable, absolute, http/https/mailto only
	p.AllowAttrs("href").OnElements("a")
	p.AllowElements("p", "br", "div", "span", "b", "strong", "i", "em", "u", "code", "pre", "kbd", "samp",
		"blockquote", "q", "cite", "ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
		"table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "sub", "sup", "small", "mark", "abbr")
	p.AllowAttrs("colspan", "rowspan").Matching(bluemonday.Integer).OnElements("td", "th")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	return p
}

// htmlPolicy is safe for concurrent use once built.
var htmlPolicy = sync.OnceValue(emailHTMLPolicy)

// ErrRemoteContent is wrapped by the error for a body whose HTML holds an
// image or other media.
var ErrRemoteContent = fmt.Errorf("images and other media are not sent in an HTML part")

// RemoteContentError refuses an HTML body with an image or other media:
// its text says which element and where it points.
type RemoteContentError struct {
	Element string // "img", "video", ...
	Source  string // its src (or srcset, data, poster), "" when none
}

func (e *RemoteContentError) Error() string {
	src := ""
	if e.Source != "" {
		src = " " + Quote(e.Source)
	}
	return fmt.Sprintf("Invalid body: the HTML has an <%s>%s: mailgate sends no images or other media in an HTML part "+
		"(the recipient's mail client would fetch it from that address, and what the address carries would leave to that server). "+
		"Remove it, or send the file as an attachment", e.Element, src)
}

func (e *RemoteContentError) Unwrap() error { return ErrRemoteContent }

// mediaTags are the elements whose purpose is to show an image or media
// fetched from elsewhere. Frames, objects and embeds are dropped with
// their content by the policy, like scripts: they never were something an
// agent writes into an email.
var mediaTags = map[atom.Atom]bool{
	atom.Img: true, atom.Image: true, atom.Picture: true, atom.Source: true, atom.Svg: true,
	atom.Video: true, atom.Audio: true, atom.Track: true,
}

// checkNoMedia refuses HTML that holds an image or other media (see
// emailHTMLPolicy), naming the first one.
func checkNoMedia(s string) error {
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return nil
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		isImageInput := tok.DataAtom == atom.Input && trimAttr(tok, "type") == "image"
		if !mediaTags[tok.DataAtom] && !isImageInput && trimAttr(tok, "background") == "" {
			continue
		}
		src := ""
		for _, k := range []string{"src", "srcset", "data", "poster", "href", "background"} {
			if src = trimAttr(tok, k); src != "" {
				break
			}
		}
		return &RemoteContentError{Element: tok.Data, Source: src}
	}
}

func trimAttr(tok html.Token, key string) string { return strings.TrimSpace(attr(tok, key)) }

// Link is one link of an HTML part: where it goes and what it shows.
type Link struct {
	Target string // the href
	Text   string // the visible text, spaces collapsed
	// Misleading: the text reads as an address (a URL, a domain, an email
	// address) other than the target.
	Misleading bool
}

// String is how a link is listed to the approver and the agent.
func (l Link) String() string {
	s := l.Target + " (text " + strconvQuote(l.Text) + ")"
	if l.Misleading {
		s += " MISLEADING: the text shows another address than the link goes to"
	}
	return s
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// HTMLLinks returns every link of an HTML part (one sanitized by the
// policy: only <a href> remains), in order.
func HTMLLinks(s string) []Link {
	var out []Link
	var cur *Link
	var text strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	closeLink := func() {
		if cur != nil {
			cur.Text = strings.Join(strings.Fields(text.String()), " ")
			cur.Misleading = misleading(cur.Text, cur.Target)
			out = append(out, *cur)
			cur = nil
		}
	}
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			closeLink()
			return out
		}
		tok := z.Token()
		switch {
		case tok.DataAtom == atom.A && tt == html.StartTagToken:
			closeLink()
			cur = &Link{Target: trimAttr(tok, "href")}
			text.Reset()
		case tok.DataAtom == atom.A && tt == html.EndTagToken:
			closeLink()
		case tt == html.TextToken && cur != nil:
			text.WriteString(tok.Data)
		}
	}
}

// addrLike is text a person reads as an address: an optional local part
// and '@', a domain with a top-level name of letters, then perhaps a path.
// Compiled on first use: its Unicode classes cost every start ~100
// allocations otherwise.
var addrLike = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([^\s/@]+@)?[\p{L}\p{N}-]+(\.[\p{L}\p{N}-]+)*\.\p{L}{2,}([/?#:]\S*)?$`)
})

// misleading reports link text that reads as an address other than target.
func misleading(text, target string) bool {
	t := normalizeAddr(text)
	if !addrLike().MatchString(t) {
		return false // words, not an address
	}
	return t != normalizeAddr(target)
}

// normalizeAddr lowers an address and drops what a person does not read
// as a difference: the scheme, a "mailto:", a trailing slash.
func normalizeAddr(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"https://", "http://", "mailto:"} {
		s = strings.TrimPrefix(s, p)
	}
	if u, err := url.Parse("http://" + s); err == nil && u.Path == "/" && u.RawQuery == "" && u.Fragment == "" {
		s = strings.TrimSuffix(s, "/")
	}
	return s
}
