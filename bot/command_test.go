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
	base := Comment{Body: "/warden review", Author: "alice", AuthorType: "User", Association: "MEMBER", OnPullRequest: true, Action: "created"}
	tests := []struct {
		name    string
		mod     func(*Comment)
		trusted []string
		verdict Verdict
		reply   string // substring of the reply
	}{
		{"member runs", nil, nil, Run, ""},
		{"owner runs", func(c *Comment) { c.Association = "OWNER" }, nil, Run, ""},
		{"collaborator runs", func(c *Comment) { c.Association = "collaborator" }, nil, Run, ""},
		{"contributor refused", func(c *Comment) { c.Association = "CONTRIBUTOR"; c.Author = "mallory" }, nil, Refuse, "@mallory cannot run `/warden` commands on this repository: only OWNER, MEMBER, COLLABORATOR may (your association is CONTRIBUTOR). Nothing was run; later commands from untrusted commenters on this pull request get no reply."},
		{"none refused", func(c *Comment) { c.Association = "" }, nil, Refuse, "(your association is NONE)"},
		{"odd login not quoted", func(c *Comment) { c.Association = "NONE"; c.Author = "<img src=x>" }, nil, Refuse, "this commenter cannot run"},
		{"configured: contributors too", func(c *Comment) { c.Association = "CONTRIBUTOR" }, []string{"OWNER", "CONTRIBUTOR"}, Run, ""},
		{"configured: owner only", nil, []string{"OWNER"}, Refuse, "only OWNER may"},
		{"bot ignored", func(c *Comment) { c.Author = "github-actions[bot]"; c.AuthorType = "Bot"; c.Association = "NONE" }, nil, Ignore, ""},
		{"edit ignored", func(c *Comment) { c.Action = "edited" }, nil, Ignore, ""},
		{"issue ignored", func(c *Comment) { c.OnPullRequest = false }, nil, Ignore, ""},
		{"no command ignored", func(c *Comment) { c.Body = "LGTM" }, nil, Ignore, ""},
		{"dismiss needs a reply", func(c *Comment) { c.Body = "/warden dismiss" }, nil, Refuse, "as a reply to one of warden's review comments"},
		{"dismiss as reply", func(c *Comment) { c.Body = "/warden dismiss false positive"; c.ReplyTo = 42 }, nil, Run, ""},
		{"dismiss naming a finding", func(c *Comment) { c.Body = "/warden dismiss w0123abc false positive" }, nil, Run, ""},
		{"help", func(c *Comment) { c.Body = "/warden help" }, nil, Run, "`/warden resume`"},
		{"accept by a member runs", func(c *Comment) { c.Body = "/warden accept outage" }, nil, Run, ""},
		{"accept by a contributor refused", func(c *Comment) { c.Body = "/warden accept lgtm"; c.Association = "CONTRIBUTOR"; c.Author = "mallory" },
			nil, Refuse, "@mallory cannot run `/warden` commands on this repository"},
		{"unknown", func(c *Comment) { c.Body = "/warden `rm`" }, nil, Refuse, "`'rm'` is not a command"},
		{"bad flag", func(c *Comment) { c.Body = "/warden review --all" }, nil, Refuse, `unknown argument "--all"`},
		{"untrusted unknown still refused for trust", func(c *Comment) { c.Body = "/warden x"; c.Association = "NONE" }, nil, Refuse, "cannot run"},
	}
	for _, tt := range tests {
		c := base
		if tt.mod != nil {
			tt.mod(&c)
		}
		d := Decide(c, tt.trusted)
		if d.Verdict != tt.verdict || !strings.Contains(d.Reply, tt.reply) {
			t.Errorf("%s: Decide(%+v) = %s %q, want %s with %q", tt.name, c, d.Verdict, d.Reply, tt.verdict, tt.reply)
		}
		if tt.verdict == Run && tt.reply == "" && d.Reply != "" {
			t.Errorf("%s: Decide(...) replied %q to a command that runs", tt.name, d.Reply)
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
