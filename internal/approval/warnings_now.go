package approval

import "github.com/mailgate/mailgate/internal/warnings"

// CurrentWarnings merges the file's warnings with what its current text
// raises, without repeats.
func (it *Item) CurrentWarnings() []string {
	seen := map[string]bool{}
	var out []string
	add := func(ss ...string) {
		for _, s := range ss {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	add(it.Warnings...)
	for _, a := range it.ToList {
		add(warnings.Texts(warnings.Address("To", a))...)
	}
	for _, a := range it.Cc {
		add(warnings.Texts(warnings.Address("Cc", a))...)
	}
	for _, a := range it.Bcc {
		add(warnings.Texts(warnings.Address("Bcc", a))...)
	}
	add(warnings.Texts(warnings.Text("The subject", it.Subject))...)
	add(warnings.Texts(warnings.Body(it.Body))...)
	return out
}
