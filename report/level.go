package report

import "github.com/org/warden/review"

// Level is how loudly a sink shows a finding: the one severity → level
// table of every sink (check-run annotations, workflow commands, SARIF).
type Level int

const (
	LevelNote    Level = iota // info
	LevelWarning              // low, medium
	LevelError                // high, critical
)

// LevelOf is the level of a severity.
func LevelOf(s review.Severity) Level {
	switch {
	case s >= review.SeverityHigh:
		return LevelError
	case s >= review.SeverityLow:
		return LevelWarning
	}
	return LevelNote
}

// The names of each level in each sink's vocabulary.
var (
	// SARIF 2.1.0 result.level.
	sarifLevels = [...]string{LevelNote: "note", LevelWarning: "warning", LevelError: "error"}
	// CheckRunLevels are GitHub's check-run annotation_level values.
	CheckRunLevels = [...]string{LevelNote: "notice", LevelWarning: "warning", LevelError: "failure"}
	// CommandLevels are the GitHub Actions workflow commands.
	CommandLevels = [...]string{LevelNote: "notice", LevelWarning: "warning", LevelError: "error"}
)

// SARIF is the level's SARIF name.
func (l Level) SARIF() string { return sarifLevels[l] }

// CheckRun is the level's check-run annotation_level.
func (l Level) CheckRun() string { return CheckRunLevels[l] }

// Command is the level's workflow command.
func (l Level) Command() string { return CommandLevels[l] }
