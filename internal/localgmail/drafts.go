package localgmail

import "google.golang.org/api/gmail/v1"

// The Gmail methods this file serves, with their quota units (methods.go).
func init() {
	handle("drafts.list", 5, (*Server).listDrafts)
	handle("drafts.create", 10, (*Server).createDraft)
	handle("drafts.send", 100, (*Server).sendDraft)
	handle("drafts.get", 5, (*Server).getDraft)
	handle("drafts.update", 15, (*Server).updateDraft)
	handle("drafts.delete", 10, (*Server).deleteDraft)
	handle("labels.list", 1, (*Server).listLabels)
	handle("labels.create", 5, (*Server).createLabel)
	handle("getProfile", 1, (*Server).getProfile)
}

// Drafts, labels and the profile. A draft is a stored message labelled DRAFT;
// drafts.send turns it into a SENT message with the same id.

func (s *Server) createDraft(c *call) (any, error) { return s.saveDraft(c, "") }

// updateDraft replaces a draft's content. As in Gmail, the draft keeps its
// id and its message gets a new one.
func (s *Server) updateDraft(c *call) (any, error) {
	id := c.params["id"]
	if !draftID().MatchString(id) {
		return nil, invalidID()
	}
	return s.saveDraft(c, id)
}

// saveDraft stores the request's message as draft id's content, or as a new
// draft when id is "": prepared as Gmail prepares drafts, labelled DRAFT, in
// the thread the draft names when the threading rules allow.
func (s *Server) saveDraft(c *call, id string) (any, error) {
	var d gmail.Draft
	media, err := c.readBody(&d)
	if err != nil {
		return nil, err
	}
	if d.Message == nil && media == nil {
		return nil, apiErr(400, "invalidArgument", "Missing draft message")
	}
	raw, err := messageBytes(media, d.Message, maxSendSize)
	if err != nil {
		return nil, err
	}
	now := s.now()
	raw = prepareOutgoing(raw, s.o.Email, s.o.Aliases, now, false, false)
	p := parseMessage(raw)
	threadID := ""
	if d.Message != nil {
		threadID = d.Message.ThreadId
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.st.drafts[id]
	if id != "" && old == nil {
		return nil, notFound()
	}
	tid, ok := s.st.explicitThread(p, threadID)
	if !ok {
		return nil, apiErr(400, "invalidArgument", "Invalid thread_id value")
	}
	if old != nil {
		s.st.remove(old)
	} else {
		id = s.st.newDraftID()
	}
	m := &storedMsg{threadID: tid, labels: []string{"DRAFT"}, internalDate: now.UnixMilli(), raw: raw, p: parsedNow(p), draftID: id}
	s.st.add(m, now)
	s.st.drafts[id] = m
	return &gmail.Draft{Id: id, Message: ref(m)}, nil
}

// listDrafts answers drafts.list: newest first, paged like messages.list,
// with q filtering the drafts' messages.
func (s *Server) listDrafts(c *call) (any, error) {
	page, next, total, err := s.list(c, nil, func(m *storedMsg) bool { return m.draftID != "" })
	if err != nil {
		return nil, err
	}
	resp := &gmail.ListDraftsResponse{ResultSizeEstimate: total, NextPageToken: next, ForceSendFields: []string{"ResultSizeEstimate"}}
	for _, m := range page {
		resp.Drafts = append(resp.Drafts, &gmail.Draft{Id: m.draftID, Message: &gmail.Message{Id: m.id, ThreadId: m.threadID}})
	}
	return resp, nil
}

func (s *Server) sendDraft(c *call) (any, error) {
	var d gmail.Draft
	media, err := c.readBody(&d)
	if err != nil {
		return nil, err
	}
	if !draftID().MatchString(d.Id) {
		return nil, invalidID()
	}
	var newRaw []byte // drafts.send may carry updated content
	if media != nil || (d.Message != nil && d.Message.Raw != "") {
		if newRaw, err = messageBytes(media, d.Message, maxSendSize); err != nil {
			return nil, err
		}
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.st.drafts[d.Id]
	if old == nil {
		// A draft sent or deleted is gone: 404 notFound (users.drafts/send:
		// "Sends the specified, existing draft"; handle-errors' 404).
		return nil, notFound()
	}
	raw, tid := old.raw, old.threadID
	p := parseMessage(raw)
	if newRaw != nil {
		// As Gmail: a message given with drafts.send replaces the draft's
		// content as drafts.update would (in the thread it names, when the
		// threading rules allow; else a thread of its own), and that is sent.
		raw, p = newRaw, parseMessage(newRaw)
		named := ""
		if d.Message != nil {
			named = d.Message.ThreadId
		}
		var ok bool
		if tid, ok = s.st.explicitThread(p, named); !ok {
			return nil, apiErr(400, "invalidArgument", "Invalid thread_id value")
		}
	}
	if err := checkRecipients(p); err != nil {
		return nil, err
	}
	raw = prepareOutgoing(raw, s.o.Email, s.o.Aliases, now, false, true)
	p = parseMessage(raw)
	s.st.remove(old)
	delete(s.st.drafts, d.Id)
	m := &storedMsg{id: old.id, threadID: tid, labels: sentLabels(p, s.o.Email), internalDate: now.UnixMilli(), raw: raw, p: parsedNow(p)}
	s.st.add(m, now)
	s.st.sent = append(s.st.sent, m)
	return ref(m), nil
}

func (s *Server) getDraft(c *call) (any, error) {
	id := c.params["id"]
	if !draftID().MatchString(id) {
		return nil, invalidID()
	}
	format, err := c.format(true)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.st.drafts[id]
	if m == nil {
		return nil, notFound()
	}
	return &gmail.Draft{Id: id, Message: m.render(format, c.metadataHeaders(), s.inlineMax())}, nil
}

func (s *Server) deleteDraft(c *call) (any, error) {
	id := c.params["id"]
	if !draftID().MatchString(id) {
		return nil, invalidID()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.st.drafts[id]
	if m == nil {
		return nil, notFound()
	}
	s.st.remove(m)
	delete(s.st.drafts, id)
	return nil, nil
}

// ---- labels and profile ----

func (s *Server) listLabels(c *call) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	resp := &gmail.ListLabelsResponse{}
	for _, l := range s.st.sortedLabels() {
		// "each label resource only contains an id, name,
		// messageListVisibility, labelListVisibility, and type" (no
		// colour: labels.get has it).
		resp.Labels = append(resp.Labels, &gmail.Label{Id: l.Id, Name: l.Name, MessageListVisibility: l.MessageListVisibility,
			LabelListVisibility: l.LabelListVisibility, Type: l.Type})
	}
	return resp, nil
}

func (s *Server) createLabel(c *call) (any, error) {
	var in gmail.Label
	if _, err := c.readBody(&in); err != nil {
		return nil, err
	}
	if err := checkLabelShape(&in); err != nil { // settings.go
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.st.createLabel(&in)
	if err != nil {
		return nil, err
	}
	cp := *l
	return &cp, nil
}

func (s *Server) getProfile(c *call) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return &gmail.Profile{EmailAddress: s.o.Email, MessagesTotal: int64(len(s.st.msgs)),
		ThreadsTotal: int64(len(s.st.threads)), HistoryId: s.st.history,
		ForceSendFields: []string{"MessagesTotal", "ThreadsTotal"}}, nil
}
