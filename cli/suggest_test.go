package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDidYouMean: a mistyped command, subcommand or flag is named with the
// nearest ones warden has, on the one line of the usage error; a word near
// nothing gets no guess.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	cases := []struct{ line, def, want string }{
		{"reveiw", "review", `unknown command "reveiw"; did you mean "review"? Run 'warden help' for usage`},
		{"prbe --force", "review", `unknown command "prbe"; did you mean "probe"? Run 'warden help' for usage`},
		{"skils list", "review", `unknown command "skils"; did you mean "skills"? Run 'warden help' for usage`},
		{"help reveiw", "review", `help: unknown command "reveiw"; did you mean "review"? Run 'warden help' for usage`},
		{"frobnicate", "review", `unknown command "frobnicate". Run 'warden help' for usage`},
		{"review --dryrun", "review", `review: unknown flag --dryrun; did you mean --dry-run? Run 'warden help review' for usage`},
		{"review --dry-run --fail-no high", "review", `review: unknown flag --fail-no; did you mean --fail-on? Run 'warden help review' for usage`},
		{"review -ouptut=r.md", "review", `review: unknown flag -ouptut; did you mean --output? Run 'warden help review' for usage`},
		{"review --diff - --skil x", "review", `review: unknown flag --skil; did you mean --skill? Run 'warden help review' for usage`},
		{"review --frobnicate", "review", `review: unknown flag --frobnicate. Run 'warden help review' for usage`},
		{"--dryrun", "review", `review: unknown flag --dryrun; did you mean --dry-run? Run 'warden help review' for usage`},
		{"--verison", "review", `unknown flag --verison; did you mean --version? Run 'warden help' for usage`},
		{"probe --forec", "review", `probe: unknown flag --forec; did you mean --force? Run 'warden help probe' for usage`},
		{"eval --replya rec cases", "review", `eval: unknown flag --replya; did you mean --replay? Run 'warden help eval' for usage`},
		{"skills lsit", "review", `skills: unknown subcommand "lsit"; did you mean "list"? Run 'warden help skills' for usage`},
		{"skills valdiate dir", "review", `skills: unknown subcommand "valdiate"; did you mean "validate"? Run 'warden help skills' for usage`},
		{"action --mdoe analyze", "action", `action: unknown flag --mdoe; did you mean --mode? Run 'warden help action' for usage`},
	}
	for _, c := range cases {
		_, err := Parse(strings.Fields(c.line), c.def)
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("Parse(%q) = %v (%T), want an *Error", c.line, err, err)
			continue
		}
		if diff := cmp.Diff(c.want, err.Error()); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", c.line, diff)
		}
	}
}

// TestSuggest: the guesses are the candidates within two edits (a
// transposition is two), nearest first, or those the word begins; none
// for a word of one or two letters that is not a prefix.
func TestSuggest(t *testing.T) {
	t.Parallel()
	cands := []string{"review", "probe", "eval", "skills", "action", "version", "help"}
	cases := []struct {
		word string
		want []string
	}{
		{"reveiw", []string{"review"}},
		{"rev", []string{"review"}},
		{"vers", []string{"version"}},
		{"evl", []string{"eval"}},
		{"hepl", []string{"help"}},
		{"x", nil},
		{"zz", nil},
		{"deploy", nil},
		{"review", []string{"review"}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, suggest(c.word, cands)); diff != "" {
			t.Errorf("suggest(%q) (-want +got):\n%s", c.word, diff)
		}
	}
}
