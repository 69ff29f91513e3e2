package bot

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body string
		want Command
	}{
		{"/warden review", Command{Kind: Review}},
		{"  /Warden   REVIEW  ", Command{Kind: Review}},
		{"thanks!\n/warden resume\n", Command{Kind: Resume}},
		{"/warden review --skill security-review", Command{Kind: Review, Skills: []string{"security-review"}}},
		{"/warden review --skill=a --skill b --skill a", Command{Kind: Review, Skills: []string{"a", "b"}}},
		{"/warden review --skill", Command{Kind: Review, Err: "--skill needs a skill name"}},
		{"/warden review --skill ../../etc", Command{Kind: Review, Err: `"../../etc" is not a skill name (lower-case letters, digits and hyphens)`}},
		{"/warden review --fast", Command{Kind: Review, Err: `unknown argument "--fast"; usage: /warden review [--skill NAME]`}},
		{"/warden resume now", Command{Kind: Resume, Err: "/warden resume takes no arguments"}},
		{"/warden dismiss", Command{Kind: Dismiss}},
		{"/warden dismiss   not a bug:  the input is   validated upstream\nmore text", Command{Kind: Dismiss, Reason: "not a bug: the input is validated upstream"}},
		{"/warden dismiss " + strings.Repeat("é", 300), Command{Kind: Dismiss, Reason: strings.Repeat("é", MaxReason) + "…"}},
		{"/warden dismiss wab12cd3 checked upstream", Command{Kind: Dismiss, Target: "wab12cd3", Reason: "checked upstream"}},
		{"/warden dismiss wab12cd3", Command{Kind: Dismiss, Target: "wab12cd3"}},
		{"/warden dismiss wXYZ not an id", Command{Kind: Dismiss, Reason: "wXYZ not an id"}},
		{"/warden help", Command{Kind: Help}},
		{"/warden accept", Command{Kind: Accept}},
		{"/Warden ACCEPT  provider outage,   reviewed by hand\nthanks", Command{Kind: Accept, Reason: "provider outage, reviewed by hand"}},
		{"/warden", Command{Kind: Help}},
		{"/warden deploy", Command{Kind: Unknown, Word: "deploy"}},
		{"please run /warden review", Command{Kind: None}},
		{"> /warden review\nquoting someone", Command{Kind: None}},
		{"```\n/warden review\n```", Command{Kind: None}},
		{"~~~~\n```\n/warden review\n~~~~\n/warden resume", Command{Kind: Resume}},
		{"/wardenreview", Command{Kind: None}},
		{"", Command{Kind: None}},
		{"/warden resume\r\n", Command{Kind: Resume}},
	}
	for _, tt := range tests {
		if got := Parse(tt.body); !cmp.Equal(tt.want, got) {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.body, got, tt.want)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	base := Comment{Body: "/warden review", Author: "alice", AuthorType: "User", Association: "MEMBER", OnPullRequest: true, PullRequestAuthor: "octocat", Action: "created"}
	tests := []struct {
		name    string
		mod     func(*Comment)
		policy  Policy
		verdict Verdict
		reply   string // substring of the reply
	}{
		{"member needs permission", nil, Policy{}, NeedsPermission, ""},
		{"owner needs permission", func(c *Comment) { c.Association = "OWNER" }, Policy{}, NeedsPermission, ""},
		{"collaborator needs permission", func(c *Comment) { c.Association = "collaborator" }, Policy{}, NeedsPermission, ""},
		{"contributor refused", func(c *Comment) { c.Association = "CONTRIBUTOR"; c.Author = "mallory" }, Policy{}, Refuse, "@mallory cannot run `/warden` commands on this repository: only OWNER, MEMBER, COLLABORATOR may (your association is CONTRIBUTOR), and every command but `/warden help` needs write, maintain or admin permission on the repository too. Nothing was run; later commands from untrusted commenters on this pull request get no reply."},
		{"none refused", func(c *Comment) { c.Association = "" }, Policy{}, Refuse, "(your association is NONE)"},
		{"odd login not quoted", func(c *Comment) { c.Association = "NONE"; c.Author = "<img src=x>" }, Policy{}, Refuse, "this commenter cannot run"},
		{"configured: contributors too", func(c *Comment) { c.Association = "CONTRIBUTOR" }, Policy{Trusted: []string{"OWNER", "CONTRIBUTOR"}}, NeedsPermission, ""},
		{"configured: owner only", nil, Policy{Trusted: []string{"OWNER"}}, Refuse, "only OWNER may"},
		{"bot ignored", func(c *Comment) { c.Author = "github-actions[bot]"; c.AuthorType = "Bot"; c.Association = "NONE" }, Policy{}, Ignore, ""},
		{"edit ignored", func(c *Comment) { c.Action = "edited" }, Policy{}, Ignore, ""},
		{"issue ignored", func(c *Comment) { c.OnPullRequest = false }, Policy{}, Ignore, ""},
		{"no command ignored", func(c *Comment) { c.Body = "LGTM" }, Policy{}, Ignore, ""},
		{"dismiss needs a reply", func(c *Comment) { c.Body = "/warden dismiss" }, Policy{}, Refuse, "as a reply to one of warden's review comments"},
		{"dismiss as reply", func(c *Comment) { c.Body = "/warden dismiss false positive"; c.ReplyTo = 42 }, Policy{}, NeedsPermission, ""},
		{"dismiss naming a finding", func(c *Comment) { c.Body = "/warden dismiss w0123abc false positive" }, Policy{}, NeedsPermission, ""},
		{"help runs without permission", func(c *Comment) { c.Body = "/warden help" }, Policy{}, Run, "`/warden resume`"},
		{"accept by a member", func(c *Comment) { c.Body = "/warden accept outage" }, Policy{}, NeedsPermission, ""},
		{"accept by a contributor refused", func(c *Comment) { c.Body = "/warden accept lgtm"; c.Association = "CONTRIBUTOR"; c.Author = "mallory" },
			Policy{}, Refuse, "@mallory cannot run `/warden` commands on this repository"},
		{"accept by the author refused", func(c *Comment) { c.Body = "/warden accept mine"; c.PullRequestAuthor = "Alice" },
			Policy{}, Refuse, "@alice opened this pull request, so cannot accept its incomplete review: someone else with write, maintain or admin permission on the repository accepts it, or, on a repository with one maintainer, the workflow sets the Action input `allow-self-accept: true`. Nothing was accepted."},
		{"accept by the author allowed", func(c *Comment) { c.Body = "/warden accept mine"; c.PullRequestAuthor = "alice" }, Policy{SelfAccept: true}, NeedsPermission, ""},
		{"accept without a known author refused", func(c *Comment) { c.Body = "/warden accept"; c.PullRequestAuthor = "" }, Policy{}, Refuse, "`allow-self-accept: true`"},
		{"author's review needs permission", func(c *Comment) { c.PullRequestAuthor = "alice" }, Policy{}, NeedsPermission, ""},
		{"unknown", func(c *Comment) { c.Body = "/warden `rm`" }, Policy{}, Refuse, "`'rm'` is not a command"},
		{"bad flag", func(c *Comment) { c.Body = "/warden review --all" }, Policy{}, Refuse, `unknown argument "--all"`},
		{"untrusted unknown still refused for trust", func(c *Comment) { c.Body = "/warden x"; c.Association = "NONE" }, Policy{}, Refuse, "cannot run"},
	}
	for _, tt := range tests {
		c := base
		if tt.mod != nil {
			tt.mod(&c)
		}
		d := Decide(c, tt.policy)
		if d.Verdict != tt.verdict || !strings.Contains(d.Reply, tt.reply) {
			t.Errorf("%s: Decide(%+v) = %s %q, want %s with %q", tt.name, c, d.Verdict, d.Reply, tt.verdict, tt.reply)
		}
		if tt.verdict != Refuse && tt.reply == "" && d.Reply != "" {
			t.Errorf("%s: Decide(...) replied %q to a command that runs", tt.name, d.Reply)
		}
	}
}

// TestPermit: a command that acts runs for a role that writes; a read,
// triage or none role and a failed lookup ("" role) are refused, saying
// what is needed and what the commenter has; help and refusals are left
// as they are.
func TestPermit(t *testing.T) {
	t.Parallel()
	c := Comment{Body: "/warden accept ok", Author: "rita", AuthorType: "User", Association: "COLLABORATOR", OnPullRequest: true, PullRequestAuthor: "octocat", Action: "created"}
	tests := []struct {
		body, role string
		writes     bool
		verdict    Verdict
		reply      string
	}{
		{"/warden accept ok", "write", true, Run, ""},
		{"/warden accept ok", "maintain", true, Run, ""},
		{"/warden review", "admin", true, Run, ""},
		{"/warden accept ok", "read", false, Refuse, "warden: `/warden accept` needs write, maintain or admin permission on the repository; @rita has read. Nothing was run."},
		{"/warden resume", "triage", false, Refuse, "`/warden resume` needs write, maintain or admin permission on the repository; @rita has triage."},
		{"/warden dismiss w0123abc", "none", false, Refuse, "`/warden dismiss` needs write, maintain or admin permission on the repository; @rita has none."},
		{"/warden accept ok", "", false, Refuse, "`/warden accept` needs write, maintain or admin permission on the repository, and warden could not look up the permission of @rita"},
		{"/warden help", "", false, Run, "**warden commands**"},
		{"/warden x", "admin", true, Refuse, "is not a command"},
	}
	for _, tt := range tests {
		c.Body = tt.body
		d := Decide(c, Policy{}).Permit(tt.role, tt.writes)
		if d.Verdict != tt.verdict || !strings.Contains(d.Reply, tt.reply) || (tt.reply == "" && d.Reply != "") {
			t.Errorf("Decide(%q).Permit(%q, %v) = %s %q, want %s with %q", tt.body, tt.role, tt.writes, d.Verdict, d.Reply, tt.verdict, tt.reply)
		}
	}
}

func TestParseTrusted(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"":                           DefaultTrusted,
		"owner":                      {"OWNER"},
		"OWNER, member  contributor": {"OWNER", "MEMBER", "CONTRIBUTOR"},
		"owner,owner":                {"OWNER"},
	} {
		got, err := ParseTrusted(in)
		if err != nil || !cmp.Equal(want, got) {
			t.Errorf("ParseTrusted(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseTrusted("OWNER,admins"); err == nil || !strings.Contains(err.Error(), `"admins" is not an author association`) {
		t.Errorf("ParseTrusted(admins) error = %v, want one naming it", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/warden review --skill a", "/warden dismiss x", "```\n/warden\n```", "> /warden help", "/warden review --skill="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c := Parse(body)
		if c.Kind < None || c.Kind > Unknown {
			t.Fatalf("Parse(%q) kind %d", body, c.Kind)
		}
		if utf8.RuneCountInString(c.Reason) > MaxReason+1 || strings.Contains(c.Reason, "\n") {
			t.Fatalf("Parse(%q) reason %q", body, c.Reason)
		}
		if c.Kind != None && !strings.Contains(strings.ToLower(body), "/warden") {
			t.Fatalf("Parse(%q) = %v without /warden", body, c.Kind)
		}
	})
}
