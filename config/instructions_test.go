package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/review"
)

func TestInstructionsConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"unknown mode", "[review]\ninstructions = \"on\"\n", `warden.toml:2: review.instructions: "on": want auto, config or off`},
		{"negative budget", "[review]\ninstructions_chars = -1\n", "warden.toml:2: review.instructions_chars: must be between 0 (the default, 6000) and 50000, got -1"},
		{"budget too large", "[review]\ninstructions_chars = 50001\n", "warden.toml:2: review.instructions_chars: must be between 0 (the default, 6000) and 50000, got 50001"},
		{"text and file", "version = 1\n\n[[instructions]]\ntext = \"a\"\nfile = \"b.md\"\n", "warden.toml:3: instructions[0]: set text or file, not both"},
		{"neither", "[[instructions]]\ntext = \"a\"\n\n[[instructions]]\npaths = [\"api/**\"]\ntext = \"  \"\n",
			`warden.toml:4: instructions[1]: no text and no file: give the instructions as text = "...", or file = "path/in/the/repository.md"`},
		{"file leaves the repository", "[[instructions]]\nfile = \"../x.md\"\n", `warden.toml:1: instructions[0].file: "../x.md" is not a path inside the repository: name a file relative to its root`},
		{"absolute file", "[[instructions]]\nfile = \"/etc/passwd\"\n", `warden.toml:1: instructions[0].file: "/etc/passwd" is not a path inside the repository: name a file relative to its root`},
		{"bad glob", "[[instructions]]\npaths = [\"api/[\"]\ntext = \"a\"\n", `warden.toml:1: instructions[0]: bad glob "api/[": syntax error in pattern`},
		{"unknown key", "[[instructions]]\ntext = \"a\"\nskill = \"x\"\n", "warden.toml:3: instructions.skill: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig("warden.toml", []byte(tt.doc))
			if err == nil || review.OneLine(err.Error()) != tt.want {
				t.Errorf("parseConfig(%q) error = %v, want %q", tt.doc, err, tt.want)
			}
		})
	}
}

func TestInstructionsSetup(t *testing.T) {
	t.Parallel()
	c, err := parseConfig("ci/warden.toml", []byte(`[review]
instructions = "config"
instructions_chars = 12000

[[instructions]]
paths = ["api/**"]
ignore = ["api/gen/**"]
text = "Check the tenant."

[[instructions]]
file = "./docs/review.md"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := review.InstructionsSetup{Mode: review.InstructionsConfig, MaxChars: 12000, Entries: []review.InstructionSetting{
		{Key: "instructions[0]", Where: "ci/warden.toml:5: instructions[0]", Paths: []string{"api/**"}, Ignore: []string{"api/gen/**"}, Text: "Check the tenant."},
		{Key: "instructions[1]", Where: "ci/warden.toml:10: instructions[1]", File: "docs/review.md"},
	}}
	if diff := cmp.Diff(want, c.Setup().Instructions); diff != "" {
		t.Errorf("Setup().Instructions mismatch (-want +got):\n%s", diff)
	}
	empty, err := parseConfig("warden.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := empty.Setup().Instructions; got.Mode != review.InstructionsAuto || got.MaxChars != 0 || got.Entries != nil {
		t.Errorf("default instructions setup = %+v, want auto with the default budget and no entries", got)
	}
}
