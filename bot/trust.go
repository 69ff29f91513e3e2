package bot

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// DefaultTrusted are the author associations that may run commands unless
// the configuration says otherwise: the repository's owner, the members of
// its organization and its collaborators.
var DefaultTrusted = []string{"OWNER", "MEMBER", "COLLABORATOR"}

// associations are the values GitHub's author_association takes.
var associations = []string{
	"COLLABORATOR", "CONTRIBUTOR", "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR", "MANNEQUIN", "MEMBER", "NONE", "OWNER",
}

// ParseTrusted reads a configured list of associations (comma or space
// separated, any case). An empty list is DefaultTrusted; a value GitHub
// does not use is an error naming it.
func ParseTrusted(s string) ([]string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		a := strings.ToUpper(f)
		if !slices.Contains(associations, a) {
			return nil, fmt.Errorf("trusted associations: %q is not an author association (want some of %s)", f, strings.Join(associations, ", "))
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return slices.Clone(DefaultTrusted), nil
	}
	return out, nil
}

// Policy is the configuration's part of who may run a command.
type Policy struct {
	// Trusted are the author associations whose commands are considered
	// at all (input command-associations); nil means DefaultTrusted.
	Trusted []string
	// SelfAccept lets the pull request's author `/warden accept` its
	// incomplete review (input allow-self-accept, for a repository of
	// one); by default someone else accepts it.
	SelfAccept bool
}

// Comment is what the Action knows of the comment that may hold a
// command, from the issue_comment or pull_request_review_comment event.
type Comment struct {
	Body string
	// Author is the commenter's login; AuthorType "User", "Bot" or
	// "Organization".
	Author, AuthorType string
	// Association is the comment's author_association.
	Association string
	// OnPullRequest is set for a comment on a pull request (an
	// issue_comment on an issue has no pull request to review).
	OnPullRequest bool
	// PullRequestAuthor is the login that opened the pull request (the
	// payload's issue.user or pull_request.user); "" when not known.
	PullRequestAuthor string
	// ReplyTo is the id of the review comment this one replies to (a
	// pull_request_review_comment's in_reply_to_id); 0 for none.
	ReplyTo int64
	// Action is the event's action: only "created" runs a command (an
	// edit must not run it a second time).
	Action string
}

// Verdict is what to do with a comment.
type Verdict int

// The verdicts.
const (
	// Ignore: no command, a bot's comment, an edit, or not on a pull
	// request. Nothing is written.
	Ignore Verdict = iota
	// Refuse: the command may not run; Reply says why. No model call and
	// no write but the reply (and the reactions).
	Refuse
	// Run: run Command.
	Run
	// NeedsPermission: Command runs only if the commenter may write to
	// the repository. The caller looks the permission up and calls
	// Decision.Permit with the answer; nothing is written before.
	NeedsPermission
)

func (v Verdict) String() string {
	switch v {
	case Ignore:
		return "ignore"
	case Refuse:
		return "refuse"
	case Run:
		return "run"
	case NeedsPermission:
		return "needs-permission"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Decision is Decide's answer.
type Decision struct {
	Verdict Verdict
	Command Command
	// Reply is the Markdown reply for Refuse, and for Run of Help; empty
	// otherwise.
	Reply string
	// Untrusted is set when Refuse is for the commenter's association:
	// such a commenter is told once per pull request, not once a comment.
	Untrusted bool
	// who is the commenter as the replies name them.
	who string
}

// login is what GitHub allows in a login (and "[bot]" apps); anything
// else is not quoted back.
var login = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$`)

// needed is the permission every command but help needs, as the replies
// say it.
const needed = "write, maintain or admin permission on the repository"

// Decide reads the command in c and decides whether it runs, from what
// the event says (the package comment has the whole rule): only a new
// comment by a person whose association is in p.Trusted is considered;
// everyone else gets a short reply and nothing else. A bot's comment
// (warden's own replies included) is ignored, so that warden never
// answers itself. Help runs; every other command NeedsPermission.
func Decide(c Comment, p Policy) Decision {
	trusted := p.Trusted
	if trusted == nil {
		trusted = DefaultTrusted
	}
	cmd := Parse(c.Body)
	if cmd.Kind == None || c.Action != "created" || strings.EqualFold(c.AuthorType, "Bot") || strings.HasSuffix(c.Author, "[bot]") {
		return Decision{Verdict: Ignore, Command: cmd}
	}
	if !c.OnPullRequest {
		return Decision{Verdict: Ignore, Command: cmd}
	}
	who := "this commenter"
	if login.MatchString(c.Author) {
		who = "@" + c.Author
	}
	assoc := strings.ToUpper(strings.TrimSpace(c.Association))
	if !slices.Contains(trusted, assoc) {
		if assoc == "" {
			assoc = "NONE"
		}
		return Decision{Verdict: Refuse, Command: cmd, Untrusted: true, who: who, Reply: fmt.Sprintf(
			"warden: %s cannot run `/warden` commands on this repository: only %s may (your association is %s), and every command but `/warden help` needs %s too. Nothing was run; later commands from untrusted commenters on this pull request get no reply.",
			who, strings.Join(trusted, ", "), assoc, needed)}
	}
	d := Decision{Verdict: Refuse, Command: cmd, who: who}
	switch {
	case cmd.Err != "":
		d.Reply = "warden: " + cmd.Err + ". Nothing was run.\n\n" + HelpText
	case cmd.Kind == Unknown:
		d.Reply = fmt.Sprintf("warden: `%s` is not a command. Nothing was run.\n\n%s", strings.ReplaceAll(cmd.Word, "`", "'"), HelpText)
	case cmd.Kind == Dismiss && c.ReplyTo == 0 && cmd.Target == "":
		d.Reply = "warden: `/warden dismiss` works as a reply to one of warden's review comments, to dismiss that finding, or in a comment naming a finding's id from warden's findings comment (`/warden dismiss w1a2b3c4 [reason]`). Nothing was dismissed."
	case cmd.Kind == Accept && !p.SelfAccept && c.PullRequestAuthor == "":
		d.Reply = "warden: the event does not say who opened this pull request, and its author may not accept its own review (the Action input `allow-self-accept: true` allows it). Nothing was accepted."
	case cmd.Kind == Accept && !p.SelfAccept && strings.EqualFold(c.Author, c.PullRequestAuthor):
		d.Reply = fmt.Sprintf("warden: %s opened this pull request, so cannot accept its incomplete review: someone else with %s accepts it, or, on a repository with one maintainer, the workflow sets the Action input `allow-self-accept: true`. Nothing was accepted.", who, needed)
	case cmd.Kind == Help:
		d.Verdict, d.Reply = Run, HelpText
	default:
		d.Verdict = NeedsPermission
	}
	return d
}

// Permit resolves NeedsPermission with the commenter's permission as the
// caller looked it up: role is the role GitHub names ("read", "triage",
// "write", ...), "" when the lookup failed; writes is whether that role
// may push (report/github's Access.Writes, the one rule). The command
// runs for a role that writes; anything else, a failed lookup included
// (it fails closed), is refused with a reply saying what is needed. Any
// other verdict is returned as it is.
func (d Decision) Permit(role string, writes bool) Decision {
	if d.Verdict != NeedsPermission {
		return d
	}
	name := "`/warden " + d.Command.Kind.String() + "`"
	switch {
	case role == "":
		d.Verdict, d.Reply = Refuse, fmt.Sprintf("warden: %s needs %s, and warden could not look up the permission of %s (the workflow run's log says why). Nothing was run; try again later.", name, needed, d.who)
	case !writes:
		d.Verdict, d.Reply = Refuse, fmt.Sprintf("warden: %s needs %s; %s has %s. Nothing was run.", name, needed, d.who, role)
	default:
		d.Verdict = Run
	}
	return d
}

// HelpText is the reply to /warden help.
const HelpText = "**warden commands** (in a comment on the pull request; `/warden help` for anyone the repository trusts, the others for people with " + needed + "):\n\n" +
	"- `/warden review`: review the current head of the pull request afresh.\n" +
	"- `/warden review --skill NAME`: review it with that skill only (repeat `--skill` for more).\n" +
	"- `/warden resume`: finish the last review: only the items it did not review are sent to the model.\n" +
	"- `/warden dismiss [reason]`: as a reply to a warden comment, dismiss that finding; it is not posted again on this pull request.\n" +
	"- `/warden dismiss <id> [reason]`: dismiss the finding with that id in warden's findings comment (the findings that are not inline comments).\n" +
	"- `/warden accept [reason]`: accept the incomplete review of the current head as it is: its check run passes required checks and records who accepted it, when and why. Not by the pull request's own author, unless the workflow allows it.\n" +
	"- `/warden help`: this list."
