// Package approval implements mailgate's approval vault: a folder of Markdown
// files through which a human allows one exact email to leave, once.
//
// # Protocol
//
// A send or reply with no matching approval makes EnsurePending write
// Pending_Approval/EMAIL_SEND_<12 hex>.md (or EMAIL_REPLY_…): YAML
// frontmatter (type, status: pending, request_id, to | thread_id and
// message_id, subject, created, expires, content_sha256, instructions) and,
// after one blank line, the exact body. The human reads it and moves it to
// Approved/ (the move is the approval) or to Rejected/. Find matches the next
// identical call against Approved/; Claim consumes the file by renaming it
// into Done/ before anything is sent; Record writes the outcome into the
// Done file.
//
// # Matching
//
// Both modes require: type equal to the call's kind; status pending or
// approved (rejected, claimed, sent, … are never honoured); the binding (the
// single `to` address, case-insensitively, for a send; `thread_id` for a
// reply); an `expires` in the future when the file has one.
//
// ModeContent (default) additionally requires an `expires`, the exact
// subject and body (only line endings are normalised), for replies the same
// message_id and resolved recipient, a content_sha256 (when present) equal to
// Request.SHA256, and — with a Ledger — a request_id/content_sha256 pair the
// server issued and nobody consumed. ModeRecipient accepts the contract's
// hand-written files (type, status: approved, to | thread_id); a file without
// `expires` is honoured only while its modification time is within the TTL.
//
// The parser (see parseApproval) tolerates what editors do — CRLF, a UTF-8
// BOM, extra fields, quoted values, "Name <addr>" — but refuses what would
// let mailgate read something other than what the human read: duplicate
// keys, flow mappings, anchors, aliases and tags, and lists in `to`. Files
// are read without following symlinks; non-.md, hidden and oversized files
// are skipped. A file whose lines end in a lone CR (classic Mac) has no
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
//   - Request files carry a warning when the email contains HTML or
//     invisible characters that a Markdown preview could hide.
//
// What is not covered: an agent that can write Pending_Approval/ can rewrite a
// request file's text after mailgate issued it (the content must still match
// the issued hash, so only cosmetic parts such as the instructions can
// change), and an agent that can also move files, or read and write the
// state store, is indistinguishable from the human. Keep the vault and the
// store outside the agent's filesystem roots; an HMAC signed by a human-run
// tool would be the next step.
//
// # Crash safety
//
// Every file mailgate writes is written to a hidden temporary file, fsynced
// and renamed into place; a crash leaves the old file or the new one, plus at
// most a ".tmp-*" file that every reader skips (SweepTemp removes those an
// hour old; serve runs it in the background at start). Claim's rename into
// Done/ is the one step whose folder (Approved/) is fsynced too, before
// anything is sent, so not even a power loss can put a consumed approval back.
// The states a process can die in, in order:
//
//	step                              on disk afterwards                          next identical call
//	EnsurePending, ledger issued      orphan ledger row, no file                  issues a new id, writes the file
//	EnsurePending, renamed            Pending_Approval/<name>.md                  returns the same name
//	Claim, ledger consumed            file still in Approved/, request consumed   refused ("already used"); new request
//	Claim, renamed and synced         Done/<name>.<time>-<rand>.md, status as      new request; the Done file is never
//	                                  moved (pending/approved)                    reusable
//	Record                            status sent (sent_at, Gmail ids) or          as above
//	                                  failed / unknown with the error, plus
//	                                  claimed_at and approval_sha256
//
// A Done file whose status is not sent, failed or unknown (still pending or
// approved, as it was moved) was claimed by a process that stopped before
// recording: the email may or may not have left; the audit log's "claim"
// entry, fsynced before Gmail is called, says when.
package approval
