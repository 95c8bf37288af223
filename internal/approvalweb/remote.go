package approvalweb

import (
	"regexp"
	"strings"
	"sync"

	"golang.org/x/net/html"
)

// remoteResources lists every URL an HTML part would make a mail client
// fetch by itself (images, media, stylesheets, frames, backgrounds, CSS
// url()), in document order without repeats. The page loads none of them
// (the frame's Content-Security-Policy is default-src 'none'); it lists
// them so the approver sees what a recipient's client would fetch, and
// from where. Links (a href) are not fetched and are listed apart.
func remoteResources(doc string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(u string) {
		u = strings.TrimSpace(u)
		if u == "" || seen[u] || strings.HasPrefix(u, "#") {
			return
		}
		seen[u] = true
		out = append(out, u)
	}
	z := html.NewTokenizer(strings.NewReader(doc))
	inStyle := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return out
		case html.TextToken:
			if inStyle {
				for _, u := range cssURLs(string(z.Text())) {
					add(u)
				}
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "style" {
				inStyle = false
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if tag == "style" && tt == html.StartTagToken {
				inStyle = true
			}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				key, val := string(k), string(v)
				switch key {
				case "src", "poster", "background", "data", "lowsrc", "dynsrc", "longdesc", "action", "formaction", "manifest", "icon":
					add(val)
				case "srcset", "imagesrcset":
					for _, c := range strings.Split(val, ",") {
						if f := strings.Fields(c); len(f) > 0 {
							add(f[0])
						}
					}
				case "href":
					if tag == "link" || tag == "image" || tag == "use" || tag == "base" {
						add(val)
					}
				case "xlink:href":
					add(val)
				case "style":
					for _, u := range cssURLs(val) {
						add(u)
					}
				case "content":
					// <meta http-equiv="refresh" content="0; url=…">
					if i := strings.Index(strings.ToLower(val), "url="); tag == "meta" && i >= 0 {
						add(val[i+4:])
					}
				}
			}
		}
	}
}

var cssURL = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))\s*\)|@import\s+(?:"([^"]*)"|'([^']*)')`)
})

func cssURLs(css string) []string {
	var out []string
	for _, m := range cssURL().FindAllStringSubmatch(css, -1) {
		for _, g := range m[1:] {
			if g != "" {
				out = append(out, g)
				break
			}
		}
	}
	return out
}
