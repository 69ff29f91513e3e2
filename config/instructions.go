package config

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/org/warden/hunks"
	"github.com/org/warden/review"
)

// instructionConfig is one [[instructions]] table: the repository's own
// instructions for reviewers of the paths its globs choose, as text or in a
// file of the repository (read from the trusted revision, as AGENTS.md is).
type instructionConfig struct {
	Paths  []string `toml:"paths"`
	Ignore []string `toml:"ignore"`
	Text   string   `toml:"text"`
	File   string   `toml:"file"`

	line int // where the table starts, for errors
}

// instructionLines records the line of each [[instructions]] header.
func (c *fileConfig) instructionLines(data []byte) {
	n := 0
	for i, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "[[instructions]]" && n < len(c.Instructions) {
			c.Instructions[n].line = i + 1
			n++
		}
	}
}

// checkInstructions checks [review] instructions and instructions_chars,
// and every [[instructions]]: text or file (one of them), globs, a file
// path inside the repository.
func (c *fileConfig) checkInstructions(bad badKey) error {
	if _, err := review.ParseInstructionsMode(c.Review.Instructions); err != nil {
		return bad(0, "review.instructions", "%v", err)
	}
	if n := c.Review.InstructionsChars; n < 0 || n > review.MaxInstructionsChars {
		return bad(0, "review.instructions_chars", "must be between 0 (the default, %d) and %d, got %d",
			review.DefaultInstructionsChars, review.MaxInstructionsChars, n)
	}
	for i, in := range c.Instructions {
		key := func(k string) string { return fmt.Sprintf("instructions[%d]%s", i, k) }
		switch {
		case in.Text != "" && in.File != "":
			return bad(in.line, key(""), "set text or file, not both")
		case in.File == "" && strings.TrimSpace(in.Text) == "":
			return bad(in.line, key(""), "no text and no file: give the instructions as text = \"...\", or file = \"path/in/the/repository.md\"")
		case in.File != "":
			if p := path.Clean(in.File); !fs.ValidPath(p) || p == "." || strings.HasPrefix(in.File, "/") {
				return bad(in.line, key(".file"), "%q is not a path inside the repository: name a file relative to its root", in.File)
			}
		}
		for _, g := range append(append([]string{}, in.Paths...), in.Ignore...) {
			if err := hunks.ValidateGlob(g); err != nil {
				return bad(in.line, key(""), "%v", err)
			}
		}
	}
	return nil
}

// instructionsSetup is the file's part of the repository's instructions:
// the mode, the budget and the [[instructions]] entries; the caller adds
// the trusted tree they are read from.
func (c *fileConfig) instructionsSetup() review.InstructionsSetup {
	mode, _ := review.ParseInstructionsMode(c.Review.Instructions) // checked at load
	s := review.InstructionsSetup{Mode: mode, MaxChars: c.Review.InstructionsChars}
	for i, in := range c.Instructions {
		file := in.File
		if file != "" {
			file = path.Clean(file)
		}
		where := fmt.Sprintf("%s: instructions[%d]", c.file, i)
		if in.line > 0 {
			where = fmt.Sprintf("%s:%d: instructions[%d]", c.file, in.line, i)
		}
		s.Entries = append(s.Entries, review.InstructionSetting{
			Key: fmt.Sprintf("instructions[%d]", i), Where: where,
			Paths: in.Paths, Ignore: in.Ignore, Text: in.Text, File: file,
		})
	}
	return s
}
