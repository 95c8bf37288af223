package main

import (
	"context"

	"github.com/mailgate/mailgate/internal/gmail"
)

// The Mailbox methods of labels, filters and the vacation responder
// (mcpserver.SettingsAdmin), connecting first like the others.

func (g *gmailConn) GetLabel(ctx context.Context, id string) (gmail.LabelInfo, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.LabelInfo, error) { return c.GetLabel(ctx, id) })
}

func (g *gmailConn) NewLabel(ctx context.Context, s gmail.LabelSpec) (gmail.LabelInfo, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.LabelInfo, error) { return c.NewLabel(ctx, s) })
}

func (g *gmailConn) PatchLabel(ctx context.Context, id string, s gmail.LabelSpec) (gmail.LabelInfo, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.LabelInfo, error) { return c.PatchLabel(ctx, id, s) })
}

func (g *gmailConn) DeleteLabel(ctx context.Context, id string) error {
	_, err := with(ctx, g, func(c *gmail.Client) (struct{}, error) { return struct{}{}, c.DeleteLabel(ctx, id) })
	return err
}

func (g *gmailConn) ListFilters(ctx context.Context) ([]gmail.Filter, error) {
	return with(ctx, g, func(c *gmail.Client) ([]gmail.Filter, error) { return c.ListFilters(ctx) })
}

func (g *gmailConn) CreateFilter(ctx context.Context, f gmail.Filter) (gmail.Filter, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.Filter, error) { return c.CreateFilter(ctx, f) })
}

func (g *gmailConn) DeleteFilter(ctx context.Context, id string) error {
	_, err := with(ctx, g, func(c *gmail.Client) (struct{}, error) { return struct{}{}, c.DeleteFilter(ctx, id) })
	return err
}

func (g *gmailConn) GetVacation(ctx context.Context) (gmail.Vacation, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.Vacation, error) { return c.GetVacation(ctx) })
}

func (g *gmailConn) UpdateVacation(ctx context.Context, v gmail.Vacation) (gmail.Vacation, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.Vacation, error) { return c.UpdateVacation(ctx, v) })
}

func (g *gmailConn) ListUnsubscribe(ctx context.Context, id string) (gmail.ListHeaders, error) {
	return with(ctx, g, func(c *gmail.Client) (gmail.ListHeaders, error) { return c.ListUnsubscribe(ctx, id) })
}
