// Package bot owns warden's pull-request commands: reading `/warden ...`
// out of a comment, deciding whether its author may run it, and the short
// replies warden gives when it will not run one. It knows nothing of
// GitHub's API or of reviews: the Action library hands it a comment's text
// and facts, and does what the Decision says.
//
// Who may run what is decided in two steps, so that bot stays free of API
// calls and a stranger costs none. Decide uses only what the event
// carries: the author's association (the first filter, against the
// configured list: anyone else is refused at once), the command's
// grammar, and for `/warden accept` whether the commenter opened the pull
// request (refused unless Policy.SelfAccept). `/warden help` then runs; a
// command that acts (review and resume spend the model budget, dismiss
// and accept change what the required check says) gets the verdict
// NeedsPermission. The caller looks up the commenter's permission on the
// repository (report/github's Maintainers, the lookup the Resume review
// button and the thumbs-down rule use) and hands the answer to
// Decision.Permit, which runs the command for write, maintain or admin
// and refuses anything else, a failed lookup included, saying what is
// needed.
//
// It imports only the standard library; it must not import any other
// package of this module, go-github or go-githubactions.
package bot

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Kind is a command.
type Kind int

// The commands.
const (
	None    Kind = iota // the comment holds no command
	Review              // /warden review [--skill NAME]...
	Resume              // /warden resume
	Dismiss             // /warden dismiss [reason], as a reply to a finding
	Help                // /warden help
	Unknown             // /warden <something else>
	Accept              // /warden accept [reason]: accept an incomplete review of the head
)

var kindNames = [...]string{"none", "review", "resume", "dismiss", "help", "unknown", "accept"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Command is one parsed command.
type Command struct {
	Kind Kind
	// Skills are the --skill names of a review, in order, without
	// repeats; empty means the configured skills.
	Skills []string
	// Reason is a dismissal's or an acceptance's reason, one line, at
	// most MaxReason runes.
	Reason string
	// Target is the finding a dismissal names by its id in warden's
	// findings comment ("w" and seven hex digits, the reason's first
	// word); "" when it names none (a reply in a review thread dismisses
	// that thread's finding).
	Target string
	// Word is what followed "/warden" for an Unknown command (clipped).
	Word string
	// Err says what is wrong with a command that cannot run as written
	// (an unknown flag, --skill without a name); the reply quotes it.
	Err string
}

// MaxReason caps a dismissal's reason, in runes.
const MaxReason = 200

// maxCommentBytes is the most of a comment Parse reads: GitHub caps a
// comment at 65,536 characters.
const maxCommentBytes = 4 * 65536

// findingID is the id of a finding in warden's findings comment: "w" and
// the first seven hex digits of its fingerprint.
var findingID = regexp.MustCompile(`^w[0-9a-f]{7}$`)

// skillName is what a skill may be called (skills' own rule: lower-case
// words joined by hyphens); anything else in --skill is an error.
var skillName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// Parse reads the first command in a comment: a line that starts with
// "/warden" (case-insensitive), outside fenced code blocks and quotes
// ("> /warden review" quotes someone else's command and runs nothing).
// A comment without one is Kind None.
func Parse(body string) Command {
	if len(body) > maxCommentBytes {
		body = body[:maxCommentBytes]
	}
	fence := ""
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOf(t); f != "" {
			fence = f
			continue
		}
		if strings.HasPrefix(t, ">") {
			continue
		}
		fields := strings.Fields(t)
		if len(fields) == 0 || !strings.EqualFold(fields[0], "/warden") {
			continue
		}
		return parseFields(fields[1:], t)
	}
	return Command{Kind: None}
}

// fenceOf is the fence a line opens (``` or ~~~, three or more), or "".
func fenceOf(t string) string {
	for _, c := range []string{"`", "~"} {
		n := len(t) - len(strings.TrimLeft(t, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

func parseFields(args []string, line string) Command {
	if len(args) == 0 {
		return Command{Kind: Help}
	}
	switch strings.ToLower(args[0]) {
	case "review":
		c := Command{Kind: Review}
		for i := 1; i < len(args); i++ {
			a := args[i]
			name, hasValue := "", false
			switch {
			case a == "--skill" || a == "-skill":
				if i+1 < len(args) {
					name, hasValue = args[i+1], true
					i++
				}
			case strings.HasPrefix(a, "--skill="):
				name, hasValue = strings.TrimPrefix(a, "--skill="), true
			default:
				c.Err = fmt.Sprintf("unknown argument %q; usage: /warden review [--skill NAME]", clip(a, 40))
				return c
			}
			if !hasValue || name == "" {
				c.Err = "--skill needs a skill name"
				return c
			}
			if !skillName.MatchString(name) {
				c.Err = fmt.Sprintf("%q is not a skill name (lower-case letters, digits and hyphens)", clip(name, 40))
				return c
			}
			if !slices.Contains(c.Skills, name) {
				c.Skills = append(c.Skills, name)
			}
		}
		return c
	case "resume":
		c := Command{Kind: Resume}
		if len(args) > 1 {
			c.Err = "/warden resume takes no arguments"
		}
		return c
	case "help":
		return Command{Kind: Help}
	case "dismiss", "accept":
		// The reason is the rest of the line, as written.
		rest := strings.TrimSpace(line[len(strings.Fields(line)[0]):])
		rest = strings.TrimSpace(rest[len(args[0]):])
		if strings.EqualFold(args[0], "accept") {
			return Command{Kind: Accept, Reason: clip(strings.Join(strings.Fields(rest), " "), MaxReason)}
		}
		c := Command{Kind: Dismiss}
		if len(args) > 1 && findingID.MatchString(args[1]) {
			c.Target = args[1]
			rest = strings.TrimSpace(rest[len(args[1]):])
		}
		c.Reason = clip(strings.Join(strings.Fields(rest), " "), MaxReason)
		return c
	}
	return Command{Kind: Unknown, Word: clip(args[0], 40)}
}

// clip cuts s to n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
