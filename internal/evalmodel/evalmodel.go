// Package evalmodel is the scripted reviewer of warden eval's tests: an
// OpenAI-compatible endpoint (internal/fakeopenai's Script) that answers
// like a crude linter, so that recording, replay, scoring and the baseline
// comparison can be proven end to end with no language model. It is not a
// model and measures nothing: recordings it makes name it as their
// producer ("scripted test reviewer"), and the corpus it answers on is
// synthetic.
//
// It flags added lines that look like an off-by-one loop bound
// ("<= len(", "len(x) + 1"); asked by a skill whose instructions say
// "every line" (the deliberately broken skill of the tests), it flags
// every added line. Asked to verify findings (review's verification
// request), it confirms those on a line that looks like such a bound and
// rejects the others.
//
// It imports internal/fakeopenai only, and only tests may use it.
package evalmodel

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/org/warden/internal/fakeopenai"
)

// Producer is the name recordings give the scripted reviewer.
const Producer = "scripted test reviewer (internal/evalmodel), not a language model"

var (
	addedRE   = regexp.MustCompile(`(?m)^\s*(\d+) \+ (.*)$`)
	offByOne  = regexp.MustCompile(`<=\s*len\(|len\(\w+\)\s*\+\s*1`)
	linesRE   = regexp.MustCompile(`The lines you may report on are (\d+) to (\d+)`)
	everyLine = "every line"
	toCheckRE = regexp.MustCompile(`(?m)^\[(\d+)\] lines (\d+)-(\d+)`)
)

// verify answers a verification request.
func verify(prompt string) fakeopenai.Answer {
	text := map[int]string{}
	for _, m := range addedRE.FindAllStringSubmatch(prompt, -1) {
		n, _ := strconv.Atoi(m[1])
		text[n] = m[2]
	}
	type verdict struct {
		ID      int    `json:"id"`
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	}
	out := struct {
		Verdicts []verdict `json:"verdicts"`
	}{Verdicts: []verdict{}}
	for _, m := range toCheckRE.FindAllStringSubmatch(prompt, -1) {
		id, _ := strconv.Atoi(m[1])
		line, _ := strconv.Atoi(m[2])
		v := verdict{ID: id, Verdict: "reject", Reason: "the line has no loop bound past the end"}
		if offByOne.MatchString(text[line]) {
			v.Verdict, v.Reason = "confirm", "the bound includes len(...)"
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	b, _ := json.Marshal(out)
	return fakeopenai.Answer{Content: string(b)}
}

// New returns the scripted endpoint.
func New() *fakeopenai.Script {
	return &fakeopenai.Script{Default: Answer}
}

type finding struct {
	Severity    string  `json:"severity"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	StartLine   int     `json:"start_line"`
	EndLine     int     `json:"end_line"`
	Suggestion  string  `json:"suggestion"`
	Confidence  float64 `json:"confidence"`
}

// Answer is the scripted answer to one chat-completions request.
func Answer(req fakeopenai.Request) fakeopenai.Answer {
	system := ""
	if len(req.Messages) > 0 {
		system = req.Messages[0].Content
	}
	prompt := req.Prompt()
	lo, hi := 0, 1<<30
	if m := linesRE.FindStringSubmatch(prompt); m != nil {
		lo, _ = strconv.Atoi(m[1])
		hi, _ = strconv.Atoi(m[2])
	}
	if strings.HasPrefix(system, "You are warden's verifier") {
		return verify(prompt)
	}
	all := strings.Contains(system, everyLine)
	out := struct {
		Findings []finding `json:"findings"`
	}{Findings: []finding{}}
	for _, m := range addedRE.FindAllStringSubmatch(prompt, -1) {
		n, _ := strconv.Atoi(m[1])
		if n < lo || n > hi {
			continue
		}
		switch {
		case all:
			out.Findings = append(out.Findings, finding{Severity: "low", Title: "Line " + m[1] + " may be wrong", Description: "Flagged because the skill asks for every line.", StartLine: n, EndLine: n, Confidence: 0.1})
		case offByOne.MatchString(m[2]):
			out.Findings = append(out.Findings, finding{Severity: "high", Title: "Loop bound goes one past the end", Description: "The bound includes len(...), so the last iteration indexes out of range.", StartLine: n, EndLine: n, Confidence: 0.8})
		}
	}
	b, _ := json.Marshal(out)
	return fakeopenai.Answer{Content: string(b)}
}
