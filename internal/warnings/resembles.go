package warnings

import (
	"fmt"
	"strings"

	"github.com/mtibben/confusables"

	"github.com/mailgate/mailgate/internal/editdist"
)

// CodeResembles: an address that is not one of the user's frequent
// contacts but looks like one (find_contact).
const CodeResembles = "resembles-contact"

// Resembles reports the first of known (the user's frequent contacts,
// bare addresses) that addr is not but could be mistaken for: the same
// under Unicode's confusable skeletons (UTS #39: "paypa1.com" and
// "paypal.com", Cyrillic "а" and Latin "a", "rn" and "m"), or the same
// local part at a domain one edit away ("examp1e.com", "exmaple.com"
// being two; "martin" and "martln"). Case is ignored.
func Resembles(addr string, known []string) (string, bool) {
	a := strings.ToLower(strings.TrimSpace(addr))
	if a == "" {
		return "", false
	}
	sa := skeleton(a)
	la, da := splitAt(a)
	for _, k := range known {
		kl := strings.ToLower(strings.TrimSpace(k))
		if kl == "" || kl == a {
			continue
		}
		if skeleton(kl) == sa {
			return k, true
		}
		lk, dk := splitAt(kl)
		if lk == la && da != "" && dk != "" && editdist.Levenshtein(da, dk) == 1 {
			return k, true
		}
	}
	return "", false
}

// ResemblesWarning is Resembles as a sentence for the agent or approver.
func ResemblesWarning(addr string, known []string) []Warning {
	like, ok := Resembles(addr, known)
	if !ok {
		return nil
	}
	return []Warning{{CodeResembles, fmt.Sprintf("%s looks like %s, one of the user's frequent contacts, but is a different address: check which one is meant.", quote(addr), quote(like))}}
}

// skeleton is s's confusable skeleton, with the digits and letters that
// the skeleton table leaves apart but a reader does not folded too.
func skeleton(s string) string {
	sk := confusables.Skeleton(s)
	return strings.NewReplacer("0", "o", "1", "l", "i", "l", "rn", "m", "vv", "w").Replace(sk)
}

func splitAt(a string) (local, domain string) {
	if i := strings.LastIndexByte(a, '@'); i >= 0 {
		return a[:i], a[i+1:]
	}
	return a, ""
}
