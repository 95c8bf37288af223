package gmail

import (
	"context"
	"fmt"
)

// DeleteDraft deletes draft id for good (users.drafts.delete: the draft
// does not go to the trash). mailgate's tools never delete a draft; the
// live check (mailgate doctor --live) deletes the one it wrote, so that its
// one write leaves nothing behind. Retried like the other draft calls:
// deleting twice answers ErrDraftNotFound, nothing worse.
func (c *Client) DeleteDraft(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("deleting draft: %w", ErrDraftNotFound)
	}
	_, err := retry(ctx, c, "drafts.delete", ScopeCompose, true, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.svc.Users.Drafts.Delete(user, id).Context(ctx).Do()
	})
	if err := callError(err, ErrDraftNotFound, "deleting draft %s", id); err != nil {
		return err
	}
	return nil
}
