package warden_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEFirstScreen: the README's first screen still has exactly two
// commands (the main job and the test command); .ci/run runs exactly that
// test command; it is the one that says what was skipped (go test -json
// read by internal/testsummary); the README says -race needs a C compiler,
// and its Configuration section says where warden.toml is read: the
// repository's top level, not the working directory.
func TestREADMEFirstScreen(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	_, quick, _ := strings.Cut(string(readme), "## Quick start\n")
	_, block, _ := strings.Cut(quick, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var commands []string
	for l := range strings.Lines(block) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			commands = append(commands, l)
		}
	}
	if len(commands) != 2 || commands[0] != "go run ./cmd/warden review --diff testdata/sample.diff --dry-run" {
		t.Fatalf("the first screen's commands are %q; want the dry run and the test command", commands)
	}
	test := commands[1]
	if test != "go test -race -timeout 20m -json ./... | go run ./internal/testsummary" {
		t.Errorf("the README's test command %q does not report what was skipped", test)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(test) + `$`).Match(ci) {
		t.Errorf(".ci/run does not run the README's test command %q exactly", test)
	}
	if !strings.Contains(quick[:min(len(quick), 3000)], "`-race` needs a C compiler") {
		t.Error("the Quick start does not say that -race needs a C compiler")
	}
	_, config, _ := strings.Cut(string(readme), "## Configuration: warden.toml\n")
	config, _, _ = strings.Cut(config, "```")
	if strings.Contains(config, "in the working directory") || !strings.Contains(config, "repository's top level") {
		t.Errorf("the Configuration section does not say warden.toml is read at the repository's top level:\n%s", config)
	}
}
