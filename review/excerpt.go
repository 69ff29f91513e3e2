package review

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/org/warden/execution"
)

// AnswerExcerptRunes bounds Item.Answer and Diagnosis.Excerpt.
const AnswerExcerptRunes = 120

// errNotContract is the problem of a batched answer without a readable
// findings array for the item's skill.
var errNotContract = errors.New("no findings array for this skill")

// answerNote is what the last unusable answer of one request was.
type answerNote struct {
	text, problem string
}

// noteAnswers makes each item's Accept remember its last rejected answer, so
// the report can show what the model said. Accept runs for one item's
// attempts one after another, and the engine's Run returns after them all,
// so notes[g] needs no lock.
func noteAnswers(items []execution.Item) []answerNote {
	notes := make([]answerNote, len(items))
	for g := range items {
		accept, note := items[g].Accept, &notes[g]
		if accept == nil {
			continue
		}
		items[g].Accept = func(resp *execution.Response) error {
			err := accept(resp)
			if err != nil {
				note.text, note.problem = noteAnswer(resp, err)
			}
			return err
		}
	}
	return notes
}

// noteAnswer is the excerpt of resp's content and what was wrong with it.
func noteAnswer(resp *execution.Response, err error) (text, problem string) {
	if resp == nil {
		return "", "no answer"
	}
	text = Excerpt(resp.Content, AnswerExcerptRunes)
	switch {
	case resp.FinishReason == "length":
		problem = "cut off at max_tokens"
	case strings.TrimSpace(resp.Content) == "":
		problem = "empty answer"
	case len(resp.Content) > MaxAnswerBytes:
		problem = "over the answer size cap"
	default:
		problem = ProblemNotContract
	}
	return text, problem
}

// ProblemNotContract is the AnswerProblem of an answer that does not follow
// the output contract: the model answered, but not with the JSON object
// with a "findings" array that the prompt asks for.
const ProblemNotContract = `not the output contract: no JSON object with a "findings" array`

// Excerpt returns the start of s as one line of at most n runes, for a
// report: invalid UTF-8 and control and format characters (bidi controls
// included) dropped, runs of white space made one space, "…" when cut. The
// sinks still neutralise it as untrusted text.
func Excerpt(s string, n int) string {
	var out []rune
	space := false
	for _, r := range strings.ToValidUTF8(s, "") {
		switch {
		case unicode.IsSpace(r):
			space = len(out) > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError:
			continue
		}
		if space {
			out, space = append(out, ' '), false
		}
		out = append(out, r)
		if len(out) > n {
			return string(out[:max(n-1, 0)]) + "…"
		}
	}
	return string(out)
}
