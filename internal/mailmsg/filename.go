package mailmsg

import (
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxFilenameBytes bounds a sanitized file name, leaving room under the
// usual 255-byte file system limit for a "-NNN" suffix.
const MaxFilenameBytes = 200

// SanitizeFilename returns name as one safe file name, for saving an
// attachment from a stranger's mail or naming one in a message we send:
//
//   - path separators (/ and \) and characters Windows refuses (<>:"|?*)
//     become "_", so the result is one path element;
//   - control, format (zero-width, BiDi override: "invoice\u202Efdp.exe"
//     shows as "invoiceexe.pdf") and tag characters are removed, invalid
//     UTF-8 becomes "_", and runs of white space one space;
//   - leading dots and spaces and trailing dots and spaces are trimmed, so
//     ".", ".." and hidden files cannot result;
//   - Windows device names (CON, NUL, COM1, LPT1, … with any extension)
//     get a "_" prefix;
//   - at most MaxFilenameBytes, cut on a character boundary, keeping a
//     short extension;
//   - "attachment" when nothing is left.
//
// It is idempotent: a sanitized name sanitizes to itself.
func SanitizeFilename(name string) string {
	name = strings.ToValidUTF8(name, "_")
	var b strings.Builder
	for _, r := range name {
		switch {
		case strings.ContainsRune(`/\<>:"|?*`, r):
			b.WriteByte('_')
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		case isInvisible(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	name = strings.Join(strings.Fields(b.String()), " ")
	name = strings.TrimLeft(name, ". ")
	name = strings.TrimRight(name, ". ")
	if name == "" {
		return "attachment"
	}
	if isReservedName(name) {
		name = "_" + name
	}
	if len(name) > MaxFilenameBytes {
		ext := filepath.Ext(name)
		if len(ext) > 16 || len(ext) == len(name) {
			ext = ""
		}
		stem := name[:len(name)-len(ext)]
		cut := MaxFilenameBytes - len(ext)
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		name = strings.TrimRight(stem[:cut], ". ") + ext
		name = strings.TrimRight(name, ". ")
	}
	return name
}

// isReservedName reports Windows device names, which open the device
// instead of a file whatever extension follows.
func isReservedName(name string) bool {
	base := name
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		c := base[3]
		return c >= '0' && c <= '9'
	}
	return false
}
