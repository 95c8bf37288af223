package localgmail

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/api/gmail/v1"
)

// The Gmail methods this file serves, with their quota units (methods.go).
func init() {
	handle("labels.patch", 5, (*Server).patchLabel)
	handle("labels.delete", 5, (*Server).deleteLabel)
	handle("settings.filters.list", 1, (*Server).listFilters)
	handle("settings.filters.create", 5, (*Server).createFilter)
	handle("settings.filters.get", 1, (*Server).getFilter)
	handle("settings.filters.delete", 5, (*Server).deleteFilter)
	handle("settings.getVacation", 1, (*Server).getVacation)
	handle("settings.updateVacation", 5, (*Server).updateVacation)
}

// Labels changed and deleted, filters and the vacation responder
// (users.labels.patch/delete, users.settings.filters.*,
// users.settings.getVacation/updateVacation), answered with the client
// library's own structs as Gmail shapes them (the schema recorder checks
// every answer against the discovery document).

// settingsState is the mailbox's settings: its filters, in creation order,
// and the vacation responder.
type settingsState struct {
	filters    []*gmail.Filter
	filterSeq  int
	vacation   gmail.VacationSettings
	forwarding []*gmail.ForwardingAddress // forwarding.go
}

// labelPalette is Gmail's set of allowed label colours (LabelColor in the
// discovery document: "Only the following predefined set of color values
// are allowed").
// Built on first use, not at every start.
var labelPalette = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`#000000 #434343 #666666 #999999 #cccccc #efefef #f3f3f3 #ffffff
		#fb4c2f #ffad47 #fad165 #16a766 #43d692 #4a86e8 #a479e2 #f691b3 #f6c5be #ffe6c7 #fef1d1 #b9e4d0 #c6f3de #c9daf8 #e4d7f5 #fcdee8
		#efa093 #ffd6a2 #fce8b3 #89d3b2 #a0eac9 #a4c2f4 #d0bcf1 #fbc8d9 #e66550 #ffbc6b #fcda83 #44b984 #68dfa9 #6d9eeb #b694e8 #f7a7c0
		#cc3a21 #eaa041 #f2c960 #149e60 #3dc789 #3c78d8 #8e63ce #e07798 #ac2b16 #cf8933 #d5ae49 #0b804b #2a9c68 #285bac #653e9b #b65775
		#822111 #a46a21 #aa8831 #076239 #1a764d #1c4587 #41236d #83334c #464646 #e7e7e7 #0d3472 #b6cff5 #0d3b44 #98d7e4 #3d188e #e3d7ff
		#711a36 #fbd3e0 #8a1c0a #f2b2a8 #7a2e0b #ffc8af #7a4706 #ffdeb5 #594c05 #fbe983 #684e07 #fdedc1 #0b4f30 #b3efd3 #04502e #a2dcc1
		#c2c2c2 #4986e7 #2da2bb #b99aff #994a64 #f691b2 #ff7537 #ffad46 #662e37 #ebdbde #cca6ac #094228 #42d692 #16a765 #757575 #1e53b8
		#007286 #7858c3 #c2185b #d93025 #54240e #633e04 #521d28 #202124 #083018`) {
		m[c] = true
	}
	return m
})

// checkLabelShape refuses what Gmail refuses of a label's visibility and
// colour.
func checkLabelShape(l *gmail.Label) error {
	if v := l.LabelListVisibility; v != "" && !slices.Contains([]string{"labelShow", "labelShowIfUnread", "labelHide"}, v) {
		return apiErr(400, "invalidArgument", "Invalid value at 'label.label_list_visibility' ("+v+")")
	}
	if v := l.MessageListVisibility; v != "" && v != "show" && v != "hide" {
		return apiErr(400, "invalidArgument", "Invalid value at 'label.message_list_visibility' ("+v+")")
	}
	if c := l.Color; c != nil {
		for _, v := range []string{c.TextColor, c.BackgroundColor} {
			if !labelPalette()[strings.ToLower(v)] {
				return apiErr(400, "invalidArgument", "Label color "+v+" is not on the allowed color palette")
			}
		}
	}
	return nil
}

func (s *Server) patchLabel(c *call) (any, error) {
	var in gmail.Label
	if _, err := c.readBody(&in); err != nil {
		return nil, err
	}
	if err := checkLabelShape(&in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.userLabel(c.params["id"], "Invalid label: "+c.params["id"])
	if err != nil {
		return nil, err
	}
	if name := strings.TrimSpace(in.Name); name != "" && !strings.EqualFold(name, l.Name) {
		lower := strings.ToLower(name)
		if reservedLabelNames[lower] || strings.HasPrefix(lower, "category_") ||
			strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//") {
			return nil, apiErr(400, "invalidArgument", "Invalid label name")
		}
		for _, o := range s.st.labels {
			if o != l && strings.EqualFold(o.Name, name) {
				return nil, apiErr(409, "duplicate", "Label name exists or conflicts")
			}
		}
		l.Name = name
	} else if name != "" {
		l.Name = name // a change of case only
	}
	if in.LabelListVisibility != "" {
		l.LabelListVisibility = in.LabelListVisibility
	}
	if in.MessageListVisibility != "" {
		l.MessageListVisibility = in.MessageListVisibility
	}
	if in.Color != nil {
		cp := *in.Color
		l.Color = &cp
	}
	s.st.history++
	cp := *l
	return &cp, nil
}

// userLabel is the label with this id when the user made it: 404 when there
// is none, 400 with Gmail's refusal when it is a system label. The caller
// holds s.mu.
func (s *Server) userLabel(id, refusal string) (*gmail.Label, error) {
	l := s.st.labels[id]
	if l == nil {
		return nil, notFound()
	}
	if l.Type == "system" {
		return nil, apiErr(400, "invalidArgument", refusal)
	}
	return l, nil
}

// deleteLabel removes a user label from every message and draft, then
// the label: "Immediately and permanently deletes the specified label and
// removes it from any messages and threads that it is applied to."
func (s *Server) deleteLabel(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.userLabel(c.params["id"], "Invalid delete request")
	if err != nil {
		return nil, err
	}
	for _, m := range s.st.order {
		if m.hasLabel(l.Id) {
			m.labels = slices.DeleteFunc(slices.Clone(m.labels), func(id string) bool { return id == l.Id })
			s.st.history++
			m.historyID = s.st.history
		}
	}
	// Gmail keeps no filter that names a label it no longer has.
	s.st.cfg.filters = slices.DeleteFunc(s.st.cfg.filters, func(f *gmail.Filter) bool {
		return f.Action != nil && (slices.Contains(f.Action.AddLabelIds, l.Id) || slices.Contains(f.Action.RemoveLabelIds, l.Id))
	})
	delete(s.st.labels, l.Id)
	s.st.history++
	return nil, nil
}

func (s *Server) listFilters(c *call) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	resp := &gmail.ListFiltersResponse{}
	for _, f := range s.st.cfg.filters {
		resp.Filter = append(resp.Filter, copyFilter(f))
	}
	return resp, nil
}

func (s *Server) getFilter(c *call) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, f := range s.st.cfg.filters {
		if f.Id == c.params["id"] {
			return copyFilter(f), nil
		}
	}
	return nil, notFound()
}

func (s *Server) createFilter(c *call) (any, error) {
	var in gmail.Filter
	if _, err := c.readBody(&in); err != nil {
		return nil, err
	}
	cr, a := in.Criteria, in.Action
	if cr == nil || (cr.From == "" && cr.To == "" && cr.Subject == "" && cr.Query == "" && cr.NegatedQuery == "" &&
		!cr.HasAttachment && cr.Size == 0) {
		return nil, apiErr(400, "invalidArgument", "Filter doesn't have any criteria")
	}
	if a == nil || (len(a.AddLabelIds) == 0 && len(a.RemoveLabelIds) == 0 && a.Forward == "") {
		return nil, apiErr(400, "invalidArgument", "Filter doesn't have any actions")
	}
	if v := cr.SizeComparison; v != "" && v != "unspecified" && v != "smaller" && v != "larger" {
		return nil, apiErr(400, "invalidArgument", "Invalid value at 'filter.criteria.size_comparison' ("+v+")")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Forward != "" && !s.forwardingAccepted(a.Forward) {
		return nil, forwardingErr() // forwarding.go
	}
	for _, id := range slices.Concat(a.AddLabelIds, a.RemoveLabelIds) {
		if _, ok := s.st.labels[id]; !ok {
			return nil, apiErr(400, "invalidArgument", "Invalid label "+id+" in AddLabelIds")
		}
	}
	in.Id = ""
	for _, f := range s.st.cfg.filters {
		g := copyFilter(f)
		g.Id = ""
		if fmt.Sprint(filterKey(g)) == fmt.Sprint(filterKey(&in)) {
			return nil, apiErr(400, "failedPrecondition", "Filter already exists")
		}
	}
	s.st.cfg.filterSeq++
	// Gmail's filter ids are opaque strings such as "ANe1BmjL…".
	in.Id = fmt.Sprintf("ANe1Bm%016d", s.st.cfg.filterSeq)
	s.st.cfg.filters = append(s.st.cfg.filters, copyFilter(&in))
	return copyFilter(&in), nil
}

func filterKey(f *gmail.Filter) [2]string {
	return [2]string{fmt.Sprintf("%+v", *f.Criteria), fmt.Sprintf("%+v", *f.Action)}
}

func (s *Server) deleteFilter(c *call) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.st.cfg.filters)
	s.st.cfg.filters = slices.DeleteFunc(s.st.cfg.filters, func(f *gmail.Filter) bool { return f.Id == c.params["id"] })
	if len(s.st.cfg.filters) == n {
		return nil, notFound()
	}
	return nil, nil
}

func copyFilter(f *gmail.Filter) *gmail.Filter {
	cp := &gmail.Filter{Id: f.Id}
	if f.Criteria != nil {
		c := *f.Criteria
		c.ForceSendFields, c.NullFields = nil, nil
		cp.Criteria = &c
	}
	if f.Action != nil {
		a := *f.Action
		a.AddLabelIds, a.RemoveLabelIds = slices.Clone(a.AddLabelIds), slices.Clone(a.RemoveLabelIds)
		a.ForceSendFields, a.NullFields = nil, nil
		cp.Action = &a
	}
	return cp
}

func (s *Server) getVacation(c *call) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v := s.st.cfg.vacation
	v.ForceSendFields = []string{"EnableAutoReply"}
	return &v, nil
}

func (s *Server) updateVacation(c *call) (any, error) {
	var in gmail.VacationSettings
	if _, err := c.readBody(&in); err != nil {
		return nil, err
	}
	if in.StartTime != 0 && in.EndTime != 0 && in.EndTime <= in.StartTime {
		return nil, apiErr(400, "invalidArgument", "Invalid vacation settings: end time must be after start time")
	}
	in.ForceSendFields, in.NullFields = nil, nil
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.cfg.vacation = in
	v := in
	v.ForceSendFields = []string{"EnableAutoReply"}
	return &v, nil
}

// Vacation is the vacation responder as the mailbox holds it (tests).
func (s *Server) Vacation() gmail.VacationSettings {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.st.cfg.vacation
}

// Filters are the mailbox's filters (tests).
func (s *Server) Filters() []*gmail.Filter {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*gmail.Filter
	for _, f := range s.st.cfg.filters {
		out = append(out, copyFilter(f))
	}
	return out
}
