package mcpserver

import (
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/gmail"
)

// Paging of the email tools that list (search_email, list_drafts). Gmail's
// page tokens are opaque and only valid with the query that gave them; the
// answer carries the next one on its own last line, and only when there is a
// next page, so a one-page answer reads exactly as it did before paging
// existed.

// maxPageToken bounds a page token an agent hands back: Gmail's are a few
// dozen characters; anything long or with control characters is not one.
const maxPageToken = 512

// pageArgs checks a listing tool's max_results (0: the default, 5) and
// page_token; it returns the page size, or the refusal to answer.
func pageArgs(maxResults int, token string) (int, *mcp.CallToolResult) {
	if maxResults == 0 {
		maxResults = 5
	}
	if maxResults < 1 || maxResults > 50 {
		return 0, errorResult(fmt.Sprintf("Error: max_results must be between 1 and 50, got %d", maxResults))
	}
	if err := checkPageToken(token); err != nil {
		return 0, errorResult("Error: " + err.Error())
	}
	return maxResults, nil
}

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

// pageFailure answers a listing whose page Gmail refused or could not give:
// a page_token it no longer knows says how to start again (again: "repeat
// the search"), anything else is "Error <doing>: …".
func pageFailure(err error, again, doing string) *mcp.CallToolResult {
	if errors.Is(err, gmail.ErrBadPageToken) {
		return errorResult("Error: page_token " + gmail.ErrBadPageToken.Error() + "; " + again + " without page_token to start again")
	}
	return errorResult("Error " + doing + ": " + userError(err))
}

// nextPageLine is the line an answer ends with when a next page exists, or
// "" on the last page.
func nextPageLine(tool, next string) string {
	if next == "" {
		return ""
	}
	return fmt.Sprintf("\nMore results: call %s again with the same arguments and page_token %q for the next page.", tool, next)
}
