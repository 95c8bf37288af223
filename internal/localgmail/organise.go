package localgmail

import (
	"fmt"
	"slices"

	"google.golang.org/api/gmail/v1"
)

// The Gmail methods this file serves, with their quota units (methods.go).
func init() {
	handle("messages.batchModify", 50, (*Server).batchModify)
	handle("messages.modify", 5, organise(false, actModify))
	handle("messages.trash", 5, organise(false, actTrash))
	handle("messages.untrash", 5, organise(false, actUntrash))
	handle("threads.modify", 10, organise(true, actModify))
	handle("threads.trash", 10, organise(true, actTrash))
	handle("threads.untrash", 10, organise(true, actUntrash))
	handle("labels.get", 1, (*Server).getLabel)
	handle("settings.sendAs.list", 1, (*Server).listSendAs)
}

// Organising mail: label changes on messages and threads (modify,
// batchModify), trash and untrash, one label's counts, and the send-as
// aliases. None of these touch a message's bytes, only its labels.

// maxBatchIDs is Gmail's limit on ids in one messages.batchModify call:
// "There is a limit of 1000 ids per request" (BatchModifyMessagesRequest,
// users.messages/batchModify).
const maxBatchIDs = 1000

// unmodifiable labels mark what a message is, not where it is filed: Gmail
// refuses to add or remove them with modify. (The error text is this
// server's; Gmail's exact wording for it is unconfirmed.)
var unmodifiable = map[string]bool{"DRAFT": true, "SENT": true, "CHAT": true}

// labelChange is the body of messages.modify, threads.modify and
// messages.batchModify.
type labelChange struct {
	add, remove []string
}

func (st *store) checkChange(ch labelChange) error {
	if len(ch.add) == 0 && len(ch.remove) == 0 {
		return apiErr(400, "invalidArgument", "No label add or removes specified")
	}
	for _, id := range append(slices.Clone(ch.add), ch.remove...) {
		if unmodifiable[id] {
			return apiErr(400, "invalidArgument", "Invalid label: "+id)
		}
	}
	if err := st.checkLabelIDs(ch.add); err != nil {
		return err
	}
	return st.checkLabelIDs(ch.remove)
}

// relabel applies ch to m (adds first, then removes, as Gmail) and bumps
// the history when anything changed.
func (st *store) relabel(m *storedMsg, ch labelChange) {
	labels := slices.Clone(m.labels)
	for _, id := range ch.add {
		if !slices.Contains(labels, id) {
			labels = append(labels, id)
		}
	}
	labels = slices.DeleteFunc(labels, func(id string) bool { return slices.Contains(ch.remove, id) })
	if !slices.Equal(labels, m.labels) {
		m.labels = labels
		st.history++
		m.historyID = st.history
	}
}

// trash moves m to the trash: TRASH added, INBOX and SPAM removed (a
// trashed message is in no other folder). Whether it was in the inbox is
// remembered, so untrash puts it back there; whether Gmail's untrash
// restores INBOX is unconfirmed.
func (st *store) trash(m *storedMsg) {
	if m.hasLabel("TRASH") {
		return
	}
	m.trashedFromInbox = m.hasLabel("INBOX")
	st.relabel(m, labelChange{add: []string{"TRASH"}, remove: []string{"INBOX", "SPAM"}})
}

func (st *store) untrash(m *storedMsg) {
	if !m.hasLabel("TRASH") {
		return
	}
	ch := labelChange{remove: []string{"TRASH"}}
	if m.trashedFromInbox {
		ch.add = []string{"INBOX"}
	}
	m.trashedFromInbox = false
	st.relabel(m, ch)
}

// message resolves a message id under s.mu: 400 for a malformed id, 404
// for an unknown one.
func (st *store) message(id string) (*storedMsg, error) {
	if !hexID().MatchString(id) {
		return nil, invalidID()
	}
	if m := st.msgs[id]; m != nil {
		return m, nil
	}
	return nil, notFound()
}

// thread resolves a thread id to its messages, oldest first.
func (st *store) thread(id string) ([]*storedMsg, error) {
	if !hexID().MatchString(id) {
		return nil, invalidID()
	}
	msgs := st.threadMessages(id)
	if len(msgs) == 0 {
		return nil, notFound()
	}
	return msgs, nil
}

// threadRef is the answer of threads.modify, trash and untrash: the thread
// with its messages' ids and labels.
func threadRef(id string, msgs []*storedMsg) *gmail.Thread {
	t := &gmail.Thread{Id: id}
	for _, m := range msgs {
		t.HistoryId = max(t.HistoryId, m.historyID)
		t.Messages = append(t.Messages, ref(m))
	}
	return t
}

// orgAction is what an organising call does to each message it names.
type orgAction int

const (
	actModify orgAction = iota // messages.modify / threads.modify: the body's label change
	actTrash
	actUntrash
)

// organise is the handler of messages.{modify,trash,untrash} (thread
// false: answers the message's id, threadId and labels) and
// threads.{modify,trash,untrash} (answers the thread with its messages').
// The target is resolved first (400 malformed, 404 unknown), then a label
// change is validated, before anything changes.
func organise(thread bool, act orgAction) handler {
	return func(s *Server, c *call) (any, error) {
		var ch labelChange
		if act == actModify {
			var in gmail.ModifyMessageRequest // same fields as ModifyThreadRequest
			if _, err := c.readBody(&in); err != nil {
				return nil, err
			}
			ch = labelChange{add: in.AddLabelIds, remove: in.RemoveLabelIds}
		}
		id := c.params["id"]
		s.mu.Lock()
		defer s.mu.Unlock()
		var msgs []*storedMsg
		if thread {
			var err error
			if msgs, err = s.st.thread(id); err != nil {
				return nil, err
			}
		} else {
			m, err := s.st.message(id)
			if err != nil {
				return nil, err
			}
			msgs = []*storedMsg{m}
		}
		if act == actModify {
			if err := s.st.checkChange(ch); err != nil {
				return nil, err
			}
		}
		for _, m := range msgs {
			switch act {
			case actModify:
				s.st.relabel(m, ch)
			case actTrash:
				s.st.trash(m)
			case actUntrash:
				s.st.untrash(m)
			}
		}
		if thread {
			return threadRef(id, msgs), nil
		}
		return ref(msgs[0]), nil
	}
}

// batchModify changes labels on up to 1000 messages and answers 204. It is
// all or nothing: a malformed id fails the whole call before any change.
// Well-formed ids of messages that do not exist (deleted meanwhile) are
// skipped, so one vanished message does not fail a batch. (Gmail's handling
// of unknown ids here is unconfirmed.)
func (s *Server) batchModify(c *call) (any, error) {
	var in gmail.BatchModifyMessagesRequest
	if _, err := c.readBody(&in); err != nil {
		return nil, err
	}
	switch {
	case len(in.Ids) == 0:
		return nil, apiErr(400, "invalidArgument", "No message ids specified")
	case len(in.Ids) > maxBatchIDs:
		return nil, apiErr(400, "invalidArgument", fmt.Sprintf("Too many ids specified: %d, limit is %d", len(in.Ids), maxBatchIDs))
	}
	ch := labelChange{add: in.AddLabelIds, remove: in.RemoveLabelIds}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.checkChange(ch); err != nil {
		return nil, err
	}
	for _, id := range in.Ids {
		if !hexID().MatchString(id) {
			return nil, invalidID()
		}
	}
	for _, id := range in.Ids {
		if m := s.st.msgs[id]; m != nil {
			s.st.relabel(m, ch)
		}
	}
	return nil, nil
}

// getLabel answers labels.get: the label with its message and thread
// counts (SPAM and TRASH count only for themselves, as in Gmail's UI).
func (s *Server) getLabel(c *call) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.st.labels[c.params["id"]]
	if l == nil {
		return nil, notFound()
	}
	cp := *l
	threads, unread := map[string]bool{}, map[string]bool{}
	for _, m := range s.st.order {
		if !m.hasLabel(l.Id) {
			continue
		}
		cp.MessagesTotal++
		threads[m.threadID] = true
		if m.hasLabel("UNREAD") {
			cp.MessagesUnread++
			unread[m.threadID] = true
		}
	}
	cp.ThreadsTotal, cp.ThreadsUnread = int64(len(threads)), int64(len(unread))
	cp.ForceSendFields = []string{"MessagesTotal", "MessagesUnread", "ThreadsTotal", "ThreadsUnread"}
	return &cp, nil
}

// listSendAs answers users.settings.sendAs.list: the primary address, then
// each alias (verified, treated as an alias).
func (s *Server) listSendAs(c *call) (any, error) {
	resp := &gmail.ListSendAsResponse{SendAs: []*gmail.SendAs{{
		SendAsEmail: s.o.Email, IsPrimary: true, IsDefault: true,
	}}}
	for _, a := range s.o.Aliases {
		resp.SendAs = append(resp.SendAs, &gmail.SendAs{SendAsEmail: a, TreatAsAlias: true, VerificationStatus: "accepted"})
	}
	for _, a := range s.o.PendingAliases {
		resp.SendAs = append(resp.SendAs, &gmail.SendAs{SendAsEmail: a, TreatAsAlias: true, VerificationStatus: "pending"})
	}
	return resp, nil
}
