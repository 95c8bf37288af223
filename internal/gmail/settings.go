package gmail

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	gmailapi "google.golang.org/api/gmail/v1"
)

// Labels, filters and the vacation responder (issue 27). Reads retry
// under the read policy. Changes are made once (callOnce): a filter
// created twice is two filters, and the gated ones (a label deleted, a
// filter created, the responder set) run behind an approval that a
// retry must not stretch; the error says whether Google may have seen
// the request (*SendError).
//
// Scopes, from Google's discovery document: labels.create, patch and
// delete need gmail.labels (or gmail.modify); settings.filters.list and
// getVacation accept gmail.readonly; filters.create, filters.delete and
// updateVacation need gmail.settings.basic, which nothing else grants
// (not even gmail.modify).

// ScopeSettingsBasic permits filters and the vacation responder.
const ScopeSettingsBasic = gmailapi.GmailSettingsBasicScope

// ErrLabelNotFound: the label id is unknown (404) or malformed (400).
var ErrLabelNotFound = errors.New("label not found")

// ErrFilterNotFound: the filter id is unknown (404) or malformed (400).
var ErrFilterNotFound = errors.New("filter not found")

// LabelSpec is a label as created or changed: a name, visibility in the
// label list (labelShow, labelShowIfUnread, labelHide) and in the message
// list (show, hide), and a colour from Gmail's palette (#rrggbb).
type LabelSpec struct {
	Name                  string
	LabelListVisibility   string
	MessageListVisibility string
	TextColor, BgColor    string
}

// LabelInfo is one label with its counts (labels.get).
type LabelInfo struct {
	Label
	LabelListVisibility, MessageListVisibility string
	TextColor, BgColor                         string
	MessagesTotal, ThreadsTotal                int64
}

func labelBody(s LabelSpec) *gmailapi.Label {
	l := &gmailapi.Label{Name: s.Name, LabelListVisibility: s.LabelListVisibility, MessageListVisibility: s.MessageListVisibility}
	if s.TextColor != "" || s.BgColor != "" {
		l.Color = &gmailapi.LabelColor{TextColor: s.TextColor, BackgroundColor: s.BgColor}
	}
	return l
}

func labelInfo(l *gmailapi.Label) LabelInfo {
	li := LabelInfo{Label: Label{ID: l.Id, Name: l.Name, Type: l.Type},
		LabelListVisibility: l.LabelListVisibility, MessageListVisibility: l.MessageListVisibility,
		MessagesTotal: l.MessagesTotal, ThreadsTotal: l.ThreadsTotal}
	if l.Color != nil {
		li.TextColor, li.BgColor = l.Color.TextColor, l.Color.BackgroundColor
	}
	return li
}

// GetLabel reads one label with its message and thread counts.
func (c *Client) GetLabel(ctx context.Context, id string) (LabelInfo, error) {
	l, err := retry(ctx, c, "labels.get", ScopeLabels, true, func(ctx context.Context) (*gmailapi.Label, error) {
		return c.svc.Users.Labels.Get(user, id).Context(ctx).Do()
	})
	if st := StatusCode(err); st == http.StatusNotFound || st == http.StatusBadRequest {
		return LabelInfo{}, fmt.Errorf("labels.get %s: %w", id, ErrLabelNotFound)
	}
	if err != nil {
		return LabelInfo{}, fmt.Errorf("labels.get: %w", err)
	}
	return labelInfo(l), nil
}

// NewLabel creates a user label (once: a 409 is ErrLabelExists).
func (c *Client) NewLabel(ctx context.Context, s LabelSpec) (LabelInfo, error) {
	l, err := callOnce(ctx, c, "labels.create", ScopeLabels, func(ctx context.Context) (*gmailapi.Label, error) {
		return c.svc.Users.Labels.Create(user, labelBody(s)).Context(ctx).Do()
	})
	if StatusCode(err) == http.StatusConflict {
		return LabelInfo{}, fmt.Errorf("labels.create %q: %w", s.Name, ErrLabelExists)
	}
	if err != nil {
		return LabelInfo{}, fmt.Errorf("labels.create: %w", err)
	}
	return labelInfo(l), nil
}

// PatchLabel changes a label's name, visibility or colour (the fields of
// s that are set; labels.patch).
func (c *Client) PatchLabel(ctx context.Context, id string, s LabelSpec) (LabelInfo, error) {
	l, err := callOnce(ctx, c, "labels.patch", ScopeLabels, func(ctx context.Context) (*gmailapi.Label, error) {
		return c.svc.Users.Labels.Patch(user, id, labelBody(s)).Context(ctx).Do()
	})
	switch StatusCode(err) {
	case http.StatusConflict:
		return LabelInfo{}, fmt.Errorf("labels.patch %q: %w", s.Name, ErrLabelExists)
	case http.StatusNotFound:
		return LabelInfo{}, fmt.Errorf("labels.patch %s: %w", id, ErrLabelNotFound)
	}
	if err != nil {
		return LabelInfo{}, fmt.Errorf("labels.patch: %w", err)
	}
	return labelInfo(l), nil
}

// DeleteLabel deletes a user label and removes it from every message and
// thread. It cannot be undone; callers gate it.
func (c *Client) DeleteLabel(ctx context.Context, id string) error {
	_, err := callOnce(ctx, c, "labels.delete", ScopeLabels, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.svc.Users.Labels.Delete(user, id).Context(ctx).Do()
	})
	return wrapOnce("labels.delete", err, ErrLabelNotFound)
}

// FilterCriteria are a filter's conditions (Gmail's FilterCriteria).
type FilterCriteria struct {
	From, To, Subject, Query, NegatedQuery string
	HasAttachment, ExcludeChats            bool
	// Size in bytes, compared as SizeComparison says ("larger",
	// "smaller"); 0: no size condition.
	Size           int64
	SizeComparison string
}

// FilterAction is what a filter does to a matching message: labels
// added and removed (ids: TRASH deletes, removing INBOX archives,
// removing UNREAD marks read, SPAM hides) and an address to forward to.
type FilterAction struct {
	AddLabelIDs, RemoveLabelIDs []string
	Forward                     string
}

// Filter is one Gmail filter.
type Filter struct {
	ID       string
	Criteria FilterCriteria
	Action   FilterAction
}

func filterFrom(f *gmailapi.Filter) Filter {
	out := Filter{ID: f.Id}
	if c := f.Criteria; c != nil {
		out.Criteria = FilterCriteria{From: c.From, To: c.To, Subject: c.Subject, Query: c.Query, NegatedQuery: c.NegatedQuery,
			HasAttachment: c.HasAttachment, ExcludeChats: c.ExcludeChats, Size: c.Size, SizeComparison: c.SizeComparison}
	}
	if a := f.Action; a != nil {
		out.Action = FilterAction{AddLabelIDs: a.AddLabelIds, RemoveLabelIDs: a.RemoveLabelIds, Forward: a.Forward}
	}
	return out
}

// ListFilters lists the mailbox's filters.
func (c *Client) ListFilters(ctx context.Context) ([]Filter, error) {
	list, err := retry(ctx, c, "settings.filters.list", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.ListFiltersResponse, error) {
		return c.svc.Users.Settings.Filters.List(user).Context(ctx).Do()
	})
	if err != nil {
		return nil, fmt.Errorf("settings.filters.list: %w", err)
	}
	return mapped(list.Filter, filterFrom), nil
}

// CreateFilter creates a filter, once; it answers the filter as Gmail
// stored it (with its id).
func (c *Client) CreateFilter(ctx context.Context, f Filter) (Filter, error) {
	cr, a := f.Criteria, f.Action
	body := &gmailapi.Filter{
		Criteria: &gmailapi.FilterCriteria{From: cr.From, To: cr.To, Subject: cr.Subject, Query: cr.Query, NegatedQuery: cr.NegatedQuery,
			HasAttachment: cr.HasAttachment, ExcludeChats: cr.ExcludeChats, Size: cr.Size, SizeComparison: cr.SizeComparison},
		Action: &gmailapi.FilterAction{AddLabelIds: a.AddLabelIDs, RemoveLabelIds: a.RemoveLabelIDs, Forward: a.Forward},
	}
	got, err := callOnce(ctx, c, "settings.filters.create", ScopeSettingsBasic, func(ctx context.Context) (*gmailapi.Filter, error) {
		return c.svc.Users.Settings.Filters.Create(user, body).Context(ctx).Do()
	})
	if err != nil {
		return Filter{}, fmt.Errorf("settings.filters.create: %w", err)
	}
	return filterFrom(got), nil
}

// DeleteFilter deletes a filter.
func (c *Client) DeleteFilter(ctx context.Context, id string) error {
	_, err := callOnce(ctx, c, "settings.filters.delete", ScopeSettingsBasic, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.svc.Users.Settings.Filters.Delete(user, id).Context(ctx).Do()
	})
	return wrapOnce("settings.filters.delete", err, ErrFilterNotFound)
}

// Vacation is the vacation responder (Gmail's VacationSettings). Start
// and End are zero when unset; Gmail keeps them in milliseconds.
type Vacation struct {
	Enabled            bool
	Subject            string
	Text, HTML         string
	RestrictToContacts bool
	RestrictToDomain   bool
	Start, End         time.Time
}

// GetVacation reads the vacation responder.
func (c *Client) GetVacation(ctx context.Context) (Vacation, error) {
	v, err := retry(ctx, c, "settings.getVacation", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.VacationSettings, error) {
		return c.svc.Users.Settings.GetVacation(user).Context(ctx).Do()
	})
	if err != nil {
		return Vacation{}, fmt.Errorf("settings.getVacation: %w", err)
	}
	return vacationFrom(v), nil
}

// UpdateVacation sets the vacation responder (all of it: a PUT), once.
func (c *Client) UpdateVacation(ctx context.Context, v Vacation) (Vacation, error) {
	body := &gmailapi.VacationSettings{EnableAutoReply: v.Enabled, ResponseSubject: v.Subject,
		ResponseBodyPlainText: v.Text, ResponseBodyHtml: v.HTML,
		RestrictToContacts: v.RestrictToContacts, RestrictToDomain: v.RestrictToDomain,
		ForceSendFields: []string{"EnableAutoReply", "RestrictToContacts", "RestrictToDomain"}}
	if !v.Start.IsZero() {
		body.StartTime = v.Start.UnixMilli()
	}
	if !v.End.IsZero() {
		body.EndTime = v.End.UnixMilli()
	}
	got, err := callOnce(ctx, c, "settings.updateVacation", ScopeSettingsBasic, func(ctx context.Context) (*gmailapi.VacationSettings, error) {
		return c.svc.Users.Settings.UpdateVacation(user, body).Context(ctx).Do()
	})
	if err != nil {
		return Vacation{}, fmt.Errorf("settings.updateVacation: %w", err)
	}
	return vacationFrom(got), nil
}

func vacationFrom(v *gmailapi.VacationSettings) Vacation {
	out := Vacation{Enabled: v.EnableAutoReply, Subject: v.ResponseSubject, Text: v.ResponseBodyPlainText, HTML: v.ResponseBodyHtml,
		RestrictToContacts: v.RestrictToContacts, RestrictToDomain: v.RestrictToDomain}
	if v.StartTime != 0 {
		out.Start = time.UnixMilli(v.StartTime).UTC()
	}
	if v.EndTime != 0 {
		out.End = time.UnixMilli(v.EndTime).UTC()
	}
	return out
}

// wrapOnce names op in err, and a 404 as notFound (still a *SendError
// that was answered, so the gate records it as failed, not unknown).
func wrapOnce(op string, err error, notFound error) error {
	if err == nil {
		return nil
	}
	var se *SendError
	if errors.As(err, &se) && se.Answered && (StatusCode(se.Err) == http.StatusNotFound || StatusCode(se.Err) == http.StatusBadRequest) {
		se.Err = fmt.Errorf("%w (%v)", notFound, se.Err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
