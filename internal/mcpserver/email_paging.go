package mcpserver

import (
	"errors"
	"fmt"
)

// Paging of the email tools that list (search_email, list_drafts). Gmail's
// page tokens are opaque and only valid with the query that gave them; the
// answer carries the next one on its own last line, and only when there is a
// next page, so a one-page answer reads exactly as it did before paging
// existed.

// maxPageToken bounds a page token an agent hands back: Gmail's are a few
// dozen characters; anything long or with control characters is not one.
const maxPageToken = 512

// checkPageToken refuses what cannot be a Gmail page token before Gmail is
// asked ("" is the first page).
func checkPageToken(token string) error {
	if len(token) > maxPageToken {
		return fmt.Errorf("page_token is %d characters; a page token from a previous answer is at most %d", len(token), maxPageToken)
	}
	for _, r := range token {
		if r < 0x21 || r > 0x7e {
			return errors.New("page_token must be the token of a previous answer, unchanged (printable ASCII)")
		}
	}
	return nil
}

// nextPageLine is the line an answer ends with when a next page exists, or
// "" on the last page.
func nextPageLine(tool, next string) string {
	if next == "" {
		return ""
	}
	return fmt.Sprintf("\\nMore results: call %s again with the same arguments and page_token %q for the next page.", tool, next)
}
