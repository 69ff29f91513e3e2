package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goTestJSON runs the real `go test -json ./...` in a module of its own
// with the given files, and returns what it wrote on standard output.
func goTestJSON(t *testing.T, files map[string]string) []byte {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test on a module of its own")
	}
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.26\n"
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	_ = cmd.Run() // fails when a package does: the summary's business
	return stdout.Bytes()
}

// TestSummarize: over real go test output, the summary keeps go test's ok
// lines and a TestMain's own, prints a failing package's whole output,
// counts passed, skipped and failed tests, groups the skipped ones by
// package and reason, says how to run the real-peer tiers when they were
// skipped, and fails (ok false) on a failing test or a package that does
// not build, not on skips.
func TestSummarize(t *testing.T) {
	t.Parallel()
	passing := map[string]string{
		"a/a_test.go": "package a\nimport \"testing\"\nfunc TestOne(t *testing.T) {}\nfunc TestTwo(t *testing.T) { t.Run(\"sub\", func(t *testing.T) {}) }\n" +
			"func TestRace(t *testing.T) { t.Skip(\"needs -race off\") }\n",
		"internal/peers/tool/tool_test.go": "package tool\nimport (\"fmt\"; \"os\"; \"testing\")\n" +
			"func TestMain(m *testing.M) { c := m.Run(); fmt.Println(\"tool: 3 tests need the tool binary\"); os.Exit(c) }\n" +
			"func TestX(t *testing.T) { t.Skip(\"tool binary not found at /x/tool: build it\") }\n" +
			"func TestY(t *testing.T) { t.Skip(\"tool binary not found at /x/tool: build it\") }\n" +
			"func TestZ(t *testing.T) { t.Parallel(); t.Skip(\"tool binary not found at /x/tool: build it\") }\n",
		"notests/n.go": "package notests\n",
	}
	var out bytes.Buffer
	ok, err := summarize(bytes.NewReader(goTestJSON(t, passing)), &out)
	if err != nil || !ok {
		t.Fatalf("summarize(passing) = %t, %v\n%s", ok, err, out.String())
	}
	for _, re := range []string{
		`(?m)^ok  \texample.com/m/a\t`,
		`(?m)^\?   \texample.com/m/notests\t\[no test files\]$`,
		`(?m)^tool: 3 tests need the tool binary$`,
		`(?m)^3 tests passed, 4 tests skipped, 0 tests failed, in 2 packages \(and 1 package without tests\)\.$`,
		`(?m)^ +3  internal/peers/tool: tool binary not found at /x/tool: build it$`,
		`(?m)^ +1  a: needs -race off$`,
		`(?m)^The real-peer tiers did not run: 3 tests in internal/peers/tool skipped for want of their binaries\. To run them, ` +
			"`bash .ci/run`",
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("the summary does not match %s:\n%s", re, out.String())
		}
	}
	if strings.Contains(out.String(), "--- SKIP") || strings.Contains(out.String(), "=== RUN") || strings.Contains(out.String(), "\nPASS\n") {
		t.Errorf("the summary shows the output of passing tests:\n%s", out.String())
	}

	failing := map[string]string{
		"a/a_test.go":      "package a\nimport \"testing\"\nfunc TestOK(t *testing.T) {}\nfunc TestBad(t *testing.T) { t.Log(\"context line\"); t.Error(\"boom\") }\n",
		"broken/b.go":      "package broken\nfunc F() int { return \"x\" }\n",
		"broken/b_test.go": "package broken\nimport \"testing\"\nfunc TestB(t *testing.T) { F() }\n",
	}
	out.Reset()
	ok, err = summarize(bytes.NewReader(goTestJSON(t, failing)), &out)
	if err != nil || ok {
		t.Fatalf("summarize(failing) = %t, %v; want not ok\n%s", ok, err, out.String())
	}
	for _, want := range []string{"context line", "boom", "--- FAIL: TestBad", "FAIL\texample.com/m/a", "cannot use \"x\"", "1 test passed, 0 tests skipped, 1 test failed", "FAILED: a, broken"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary of a failing run does not say %q:\n%s", want, out.String())
		}
	}
}

// TestSummarizePeersOnly: the real-peer tiers are recognised by their
// import path, also when they are all the run holds.
func TestSummarizePeersOnly(t *testing.T) {
	t.Parallel()
	out := goTestJSON(t, map[string]string{
		"internal/peers/tool/tool_test.go": "package tool\nimport \"testing\"\nfunc TestX(t *testing.T) { t.Skip(\"no tool\") }\n",
		"internal/peers/other/o_test.go":   "package other\nimport \"testing\"\nfunc TestY(t *testing.T) { t.Skip(\"no other\") }\n",
	})
	var b bytes.Buffer
	if ok, err := summarize(bytes.NewReader(out), &b); !ok || err != nil {
		t.Fatalf("summarize = %t, %v\n%s", ok, err, b.String())
	}
	if !strings.Contains(b.String(), "The real-peer tiers did not run: 2 tests in other and tool skipped") {
		t.Errorf("the summary does not name the real-peer tiers:\n%s", b.String())
	}
}

// TestSummarizeNothing: no test result at all (go test could not start)
// is an error, not a pass.
func TestSummarizeNothing(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if ok, err := summarize(strings.NewReader("go: cannot find main module\n"), &out); ok || err == nil {
		t.Errorf("summarize(no JSON) = %t, %v; want an error", ok, err)
	}
	if !strings.Contains(out.String(), "go: cannot find main module") {
		t.Errorf("a line that is not JSON was not passed through: %q", out.String())
	}
}
