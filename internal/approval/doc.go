// Package approval implements mailgate's approval vault: a folder of Markdown
// files through which a human allows one exact email to leave, once.
//
// # Protocol
//
// A send or reply with no matching approval makes Request write
// Pending_Approval/<date>_<recipient>_<subject>_<id>.md, where id is the
// first 128 bits of the request's content hash (see requestName): YAML
// frontmatter (type, status: pending, request_id, to | thread_id and
// message_id, subject, created, expires, content_sha256, instructions,
// warnings, format: mailgate-request-v2; when the email has them, cc and bcc
// lists, `to` as a list when it names several, html_sha256 for an HTML part,
// and attachments, one line per file with its size and SHA-256) and, in the
// body area, mailgate's notes for the human (a repeat warning, the warnings,
// what to do, every recipient, the HTML part, the attachments) above the
// line BodyMarker, after which (and one blank line) comes the exact email
// body. Asking again returns the same file while it is usable; a file of
// other content under the name is never replaced (the request takes another
// name). At most MaxPending requests wait in all and MaxPendingPerRecipient
// per recipient; beyond that nothing is written (*BacklogError).
//
// The human reads it (or `mailgate approvals show`), may correct the subject
// or the body, and moves it to Approved/ (the move is the approval) or to
// Rejected/. Find matches the next identical call against the files in
// Approved/ whose name holds the id; Claim consumes the file by renaming it
// into Done/ before anything is sent; Record writes the outcome, the
// original and final hashes, and a note saying what happened into the Done
// file, and drops the instruction to move it.
//
// Files tell the truth: a file moved to Rejected/ by hand is rewritten to
// status: rejected the first time Find sees it (Reject does it at once), an
// approval mailgate must refuse is moved to Rejected/ with status: refused
// and its reason, a Done file says where the email went and what happened,
// and only a file in Pending_Approval/ is told to be moved to Approved/ (the
// instruction is worded "While this file is in Pending_Approval/", since a
// file manager moves files without rewriting them).
//
// An identical call after a consumed copy (Done/) gets a new request; when
// the earlier copy was sent, or may have been, the new one is marked as a
// repeat in its name (_repeat-<n>) and in a warning at its very top, so a
// second copy is only ever sent on purpose (Pending.Earlier tells the
// caller, which tells the agent "already sent at …").
//
// # Matching
//
// Both modes require: type equal to the call's kind; status pending or
// approved (rejected, refused, claimed, sent, … are never honoured); an
// `expires` in the future when the file has one.
//
// ModeContent (default) additionally requires an `expires`, a content_sha256
// equal to Request.SHA256 (the request as the agent asked for it) and — with
// a Ledger — a request_id/content_sha256 pair the server issued and nobody
// consumed. The file must carry the call's recipient (case-insensitively)
// or, for a reply, its thread, message and resolved recipient, and every
// further To, cc and bcc, the HTML part's digest and the attachment lines
// of the call (a forward also binds the message it forwards). Its subject
// and body are then the email to send (Approval.Final): the human may have
// corrected them, and the file is the source of truth (Approval.Edited says
// what changed). Without a ledger nothing proves the file began as
// mailgate's request, so the subject and body must equal the call's (only
// line endings are normalised). A ledger-issued request whose recipient,
// thread or message the human changed is refused for good: an approval can
// correct what an email says, never to whom it goes. ModeRecipient accepts
// the contract's hand-written files (type, status: approved, to |
// thread_id); a file without `expires` is honoured only while its
// modification time is within the TTL.
//
// The parser (see parseApproval) tolerates what editors do — CRLF, a UTF-8
// BOM, extra fields, quoted values, "Name <addr>" — but refuses what would
// let mailgate read something other than what the human read: duplicate
// keys, flow mappings, anchors, aliases and tags, lists in `to`, and a
// FormatV2 file whose BodyMarker line is missing. The first BodyMarker line
// counts, so a body holding that line cannot move the boundary. Files are
// read without following symlinks; non-.md, hidden and oversized files are
// skipped. A file whose lines end in a lone CR (classic Mac) has no
// recognisable frontmatter and is skipped.
//
// # Self-approval
//
// An agent that can write into the vault could approve its own email. What
// is covered:
//   - Content binding: an approval authorises only the exact recipient,
//     subject and body it shows, so a human-approved file cannot be stretched.
//   - With a Ledger (content mode): a file the agent writes straight into
//     Approved/ is refused, because its request_id was never issued; a Done
//     file copied back is refused, because its request is consumed; and a
//     Done file's status (claimed, sent, …) is refused even without a ledger.
//   - Request files carry warnings (internal/warnings) for look-alike and
//     mixed-script addresses, invisible and bidirectional characters,
//     punycode, a Reply-To elsewhere, a recipient never written to, and body
//     text a Markdown viewer hides.
//
// What is not covered: an agent that can write Pending_Approval/ can rewrite a
// request file's text after mailgate issued it, and since the human may
// correct subject and body, such a rewrite is what would be sent once the
// human approves the file (the human approves what the file shows; `mailgate
// approvals show` reads the file as it is). An agent that can also move
// files, or read and write the state store, is indistinguishable from the
// human. Keep the vault and the
// store outside the agent's filesystem roots; an HMAC signed by a human-run
// tool would be the next step.
//
// # Crash safety
//
// Every file mailgate writes is written to a hidden temporary file, fsynced
// and renamed into place (internal/atomicfile); a crash leaves the old file or
// the new one, plus at most a hidden temporary file that every reader skips
// (atomicfile.IsTemp; older versions named it ".tmp-*"; SweepTemp removes those an
// hour old; serve runs it in the background at start). Claim's rename into
// Done/ is the one step whose folder (Approved/) is fsynced too, before
// anything is sent, so not even a power loss can put a consumed approval back.
// The states a process can die in, in order:
//
//	step                              on disk afterwards                          next identical call
//	Request, ledger issued            orphan ledger row, no file                  issues a new id, writes the file
//	Request, renamed                  Pending_Approval/<name>.md                  returns the same name
//	Find, refusal moved               Rejected/<name>.md, status as it was        refused ("rejected"); Find rewrites
//	                                  (refused written just after)                its status to rejected
//	Claim, ledger consumed            file still in Approved/, request consumed   refused ("already used"); new request
//	Claim, renamed and synced         Done/<name>.<time>-<rand>.md, status as      new request, marked as a repeat;
//	                                  moved (pending/approved)                    the Done file is never reusable
//	Record                            status sent (sent_at, Gmail ids) or          as above ("already sent at …" when
//	                                  failed / unknown with the error, plus       sent)
//	                                  claimed_at, approval_sha256,
//	                                  original_sha256, final_sha256
//	Approve / Reject (terminal)       status rewritten, file not yet moved        a file saying approved in
//	                                                                              Pending_Approval/ is still current
//	ApproveAs / RejectAs, taken       hidden .tmp-decide-<ms>-<tag>-held-<name>   writes a new request; SweepTemp puts
//	                                  in its folder                               the file back where it was, undecided
//	ApproveAs / RejectAs, marked      hidden .tmp-decide-<ms>-<tag>-<to>-<name>   SweepTemp finishes the move into
//	                                                                              Approved/ or Rejected/ (recover.go)
//
// A Done file whose status is not sent, failed or unknown (still pending or
// approved, as it was moved) was claimed by a process that stopped before
// recording: the email may or may not have left; the audit log's "claim"
// entry, fsynced before Gmail is called, says when.
package approval
