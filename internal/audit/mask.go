package audit

import (
	"net/mail"
	"regexp"
	"strings"
	"sync"
)

// MaskAddress hides the local part of an email address for the audit log:
// "john@example.com" and "John <john@example.com>" both become
// "j***@example.com". Anything that is not exactly one parsable address
// becomes "***", so a malformed or smuggled list never reaches the log.
func MaskAddress(s string) string {
	a, err := mail.ParseAddress(strings.TrimSpace(s))
	if err != nil {
		return "***"
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at <= 0 || at == len(a.Address)-1 {
		return "***"
	}
	local, domain := a.Address[:at], a.Address[at+1:]
	r := []rune(local)
	return string(r[0]) + "***@" + strings.ToLower(domain)
}

// addressLike finds things that look like email addresses inside free text.
var addressLike = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[^\s<>"'(),;:@\[\]]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+`)
})

// maskAddresses masks every address-like substring of s, so an error text
// quoting a recipient never puts the full address in the log.
func maskAddresses(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return addressLike().ReplaceAllStringFunc(s, MaskAddress)
}
