package skills

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"gopkg.in/yaml.v3"
)

// Skill is one review skill.
type Skill struct {
	Name         string   // required; lower-case letters, digits and hyphens
	Description  string   // required; one line shown by `warden skills list`
	Instructions string   // the Markdown body after the frontmatter: what the model is told
	Paths        []string // optional doublestar globs: review only matching paths (empty: all)
	Ignore       []string // optional doublestar globs: never review matching paths
	Source       string   // "builtin", or the file's path relative to the root it was found under (slash-separated)
}

// clone returns a deep copy of s.
func (s *Skill) clone() *Skill {
	c := *s
	c.Paths = slices.Clone(s.Paths)
	c.Ignore = slices.Clone(s.Ignore)
	return &c
}

// Problem is one thing wrong with a skill file.
type Problem struct {
	File    string // the file's path as given to Parse, or as found by Discover and Validate; "" when the problem is not about one file
	Line    int    // 1-based; 0 when the problem is about the whole file
	Message string
}

// Error formats the problem as "file:line: message", leaving out the line
// when it is 0 and the file when it is "".
func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		if p.File != "" {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(p.Line))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is a list of Problem that is itself an error: its message has one
// problem per line. A function that returns Problems as an error returns a
// nil error, never an empty list, when there is none.
type Problems []Problem

// Error returns the problems, one per line.
func (ps Problems) Error() string {
	if len(ps) == 0 {
		return "no problems"
	}
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Blocking returns the problems that stop a review running the skills
// named: all of them when names is empty (every skill runs), else those
// about one of the named skills or about no skill in particular (an
// unreadable directory). A problem is about the skill its file's path
// names (NAME/SKILL.md or NAME.md: a skill's name must match it), so a
// broken SKILL.md of another skill does not stop `--skill good`; the caller
// may still warn about it.
func (ps Problems) Blocking(names []string) Problems {
	if len(names) == 0 {
		return ps
	}
	var out Problems
	for _, p := range ps {
		if s := p.Skill(); s == "" || slices.Contains(names, s) {
			out = append(out, p)
		}
	}
	return out
}

// Skill returns the name of the skill the problem's file defines, as its
// path says (NAME/SKILL.md in any case, NAME.md, or an entry NAME of a
// discovery directory, such as a dangling link), or "" when the problem is
// not about one skill's file.
func (p Problem) Skill() string {
	base := path.Base(p.File)
	switch {
	case p.File == "":
		return ""
	case slices.Contains(Dirs, path.Dir(p.File)):
		return strings.TrimSuffix(base, ".md")
	case strings.EqualFold(base, "SKILL.md"):
		if dir := path.Dir(p.File); dir != "." && dir != "/" {
			return path.Base(dir)
		}
	case strings.HasSuffix(base, ".md") && len(base) > len(".md"):
		return strings.TrimSuffix(base, ".md")
	}
	return ""
}

// Unwrap returns each Problem as an error, so that errors.As finds a Problem
// in an error that wraps Problems.
func (ps Problems) Unwrap() []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errs
}

// maxFileSize bounds a skill file. The instructions are sent with every
// request the skill makes, so a file this large is a mistake, not a skill.
const maxFileSize = 256 << 10

// maxProblems bounds the problems reported for one file; the last one says
// how many more there were.
const maxProblems = 50

// maxNameLen is the longest name the Agent Skills format allows.
const maxNameLen = 64

var nameRE = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// Keys of the frontmatter. Tolerated keys belong to the Agent Skills format
// (license, compatibility, metadata, allowed-tools), to common practice
// (version) and to Claude Code's skills (the rest); warden ignores them so
// that a skill under .agents/skills or .claude/skills serves both tools.
var (
	knownKeys     = []string{"name", "description", "paths", "ignore"}
	toleratedKeys = []string{
		"license", "compatibility", "metadata", "allowed-tools", "version",
		"argument-hint", "disable-model-invocation", "user-invocable", "model", "effort", "context", "agent", "hooks", "shell",
	}
)

const (
	msgNoFrontmatter = "no YAML frontmatter: the file must start with a line ---"
	msgUnclosed      = "unclosed frontmatter: no line --- closes the one on line 1"
)

// Parse reads one SKILL.md file. file is the file's slash-separated path,
// used in problems, as the skill's Source, and to check the skill's name: a
// file NAME/SKILL.md or NAME.md must declare name: NAME (a file named
// otherwise, or a SKILL.md with no folder in file, is not checked).
//
// The file is YAML frontmatter between a first line --- and the next line
// ---, then the Markdown instructions. The frontmatter's keys are name and
// description (both required; a description over several lines is joined
// into one), paths and ignore (optional doublestar globs relative to the
// repository root, as a list or a comma-separated string; a leading "!"
// negates one), and the keys of the Agent Skills format and Claude Code that
// warden ignores (license, compatibility, metadata, allowed-tools, version,
// argument-hint, disable-model-invocation, user-invocable, model, effort,
// context, agent, hooks, shell); any other key is a problem. A UTF-8 byte
// order mark and CRLF line endings are accepted.
//
// When anything is wrong Parse returns a nil Skill and a Problems error with
// every problem it found, in line order. It never panics.
func Parse(file string, data []byte) (*Skill, error) {
	s, _, ps := parse(file, data)
	if len(ps) > 0 {
		return nil, ps
	}
	return s, nil
}

// parser collects the problems of one file.
type parser struct {
	file     string
	problems Problems
}

func (p *parser) addf(line int, format string, args ...any) {
	p.problems = append(p.problems, Problem{File: p.file, Line: line, Message: fmt.Sprintf(format, args...)})
}

// parse is Parse that also returns the line of the name key (for duplicate
// problems found later) and the problems as a list.
func parse(file string, data []byte) (skill *Skill, nameLine int, problems Problems) {
	p := &parser{file: file}
	defer func() {
		// Nothing here should panic, but a skill file is user input and
		// yaml.v3 is a large parser: turn a panic into a problem.
		if r := recover(); r != nil {
			skill, nameLine = nil, 0
			problems = append(p.problems, Problem{File: file, Message: fmt.Sprintf("internal error parsing the skill: %v", r)})
		}
	}()
	skill, nameLine = p.parse(data)
	slices.SortStableFunc(p.problems, func(a, b Problem) int { return a.Line - b.Line })
	if n := len(p.problems); n > maxProblems {
		p.problems = append(p.problems[:maxProblems-1:maxProblems-1],
			Problem{File: file, Message: fmt.Sprintf("%d more problems not shown", n-maxProblems+1)})
	}
	if len(p.problems) > 0 {
		return nil, 0, p.problems
	}
	return skill, nameLine, nil
}

func (p *parser) parse(data []byte) (*Skill, int) {
	if len(data) > maxFileSize {
		p.addf(0, "file is larger than %d bytes, too large for a skill", maxFileSize)
		return nil, 0
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if !utf8.Valid(data) {
		p.addf(firstInvalidLine(data), "not valid UTF-8: a skill file must be UTF-8 text")
		return nil, 0
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n") // yaml.v3 counts a lone CR as a line break too
	lines := strings.Split(text, "\n")
	if !isFence(lines[0]) {
		p.addf(1, msgNoFrontmatter)
		return nil, 0
	}
	end := 0 // index of the closing line
	for i := 1; i < len(lines); i++ {
		if isFence(lines[i]) {
			end = i
			break
		}
	}
	if end == 0 {
		p.addf(1, msgUnclosed)
		return nil, 0
	}

	s := &Skill{Source: p.file}
	nameLine := p.frontmatter(s, strings.Join(lines[1:end], "\n")+"\n", end+1)

	s.Instructions = strings.TrimSpace(strings.Join(lines[end+1:], "\n"))
	if s.Instructions == "" {
		p.addf(end+1, "no instructions: the Markdown body after the frontmatter is empty")
	}
	return s, nameLine
}

// isFence reports whether line opens or closes the frontmatter.
func isFence(line string) bool { return strings.TrimRight(line, " \t") == "---" }

// firstInvalidLine returns the 1-based line of the first byte of data that is
// not valid UTF-8.
func firstInvalidLine(data []byte) int {
	line := 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size == 1 {
			break
		}
		if r == '\n' {
			line++
		}
		data = data[size:]
	}
	return line
}

// yamlLineRE matches the line yaml.v3 puts in its syntax errors.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// frontmatter decodes the YAML between the fences into s. The YAML's first
// line is line 2 of the file and closing is the line of the closing fence.
// It returns the line of the name key, 0 when there is none.
func (p *parser) frontmatter(s *Skill, src string, closing int) int {
	const offset = 1 // YAML line n is file line n+1
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		msg, line := err.Error(), 1
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			// yaml.v3 sometimes reports the line after the one at fault:
			// keep the line inside the frontmatter.
			line = min(max(n+offset, 2), closing)
			msg = msg[len(m[0]):]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		if strings.Contains(msg, "did not find expected alphabetic or numeric character") {
			msg += ` (a value that starts with * or & must be quoted, like "**/*.go")`
		}
		p.addf(line, "invalid YAML in frontmatter: %s", msg)
		return 0
	}

	var root *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		root = resolve(doc.Content[0])
	}
	if root == nil || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		// Empty frontmatter, or only comments.
		p.addf(1, "frontmatter has no name: add name: followed by the skill's name")
		p.addf(1, "frontmatter has no description: add description: followed by one line saying what the skill reviews")
		return 0
	}
	if root.Kind != yaml.MappingNode {
		p.addf(root.Line+offset, "frontmatter must be a YAML mapping of keys to values, not %s", describe(root))
		return 0
	}

	seen := map[string]int{} // key → line
	var nameNode, descNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := resolve(root.Content[i]), root.Content[i+1]
		kline := k.Line + offset
		if k.Kind != yaml.ScalarNode {
			p.addf(kline, "frontmatter key must be a string, not %s", describe(k))
			continue
		}
		key := k.Value
		if first, dup := seen[key]; dup {
			p.addf(kline, "duplicate key %q (first on line %d)", key, first)
			continue
		}
		seen[key] = kline
		switch key {
		case "name":
			nameNode = v
		case "description":
			descNode = v
		case "paths":
			s.Paths = p.globs(key, v)
		case "ignore":
			s.Ignore = p.globs(key, v)
		default:
			if !slices.Contains(toleratedKeys, key) {
				p.addf(kline, "unknown key %q: warden reads %s, and ignores the other keys of Agent Skills and Claude Code",
					key, strings.Join(knownKeys, ", "))
			}
		}
	}

	nameLine := 0
	if nameNode == nil {
		p.addf(1, "frontmatter has no name: add name: followed by the skill's name")
	} else {
		nameLine = seen["name"]
		s.Name = p.name(nameNode, nameLine)
	}
	if descNode == nil {
		p.addf(1, "frontmatter has no description: add description: followed by one line saying what the skill reviews")
	} else {
		s.Description = p.description(descNode, seen["description"])
	}
	return nameLine
}

// name checks the value of the name key, which is on line kline.
func (p *parser) name(v *yaml.Node, kline int) string {
	v = resolve(v)
	name, ok := p.scalar("name", v)
	if !ok {
		return ""
	}
	line := v.Line + 1
	switch {
	case name == "":
		p.addf(kline, "name is empty")
	case len(name) > maxNameLen:
		p.addf(line, "name is %d characters long, more than %d", len(name), maxNameLen)
	case !nameRE.MatchString(name):
		p.addf(line, "name %q must be lower-case letters, digits and single hyphens between them (like code-review)", name)
	default:
		if want, where := p.expectedName(); want != "" && want != name {
			p.addf(line, "name %q does not match its %s %q: rename one so they agree", name, where, want)
		}
	}
	return name
}

// expectedName returns the name the file's path implies, and whether it
// comes from a folder (NAME/SKILL.md) or a file name (NAME.md); "" when the
// path implies none.
func (p *parser) expectedName() (name, where string) {
	base := path.Base(p.file)
	switch {
	case base == "SKILL.md":
		dir := path.Dir(p.file)
		if dir == "." || dir == "/" {
			return "", ""
		}
		return path.Base(dir), "folder"
	case strings.HasSuffix(base, ".md") && len(base) > len(".md"):
		return strings.TrimSuffix(base, ".md"), "file name"
	}
	return "", ""
}

// description checks the value of the description key, which is on line
// kline. Folded or multi-line descriptions are joined into one line.
func (p *parser) description(v *yaml.Node, kline int) string {
	v = resolve(v)
	d, ok := p.scalar("description", v)
	if !ok {
		return ""
	}
	d = strings.Join(strings.Fields(d), " ")
	if d == "" {
		p.addf(kline, "description is empty")
	}
	return d
}

// scalar returns the text of a scalar value of key, "" for null. Any other
// kind of value is a problem.
func (p *parser) scalar(key string, v *yaml.Node) (string, bool) {
	if v.Kind != yaml.ScalarNode {
		p.addf(v.Line+1, "%s must be a string, not %s", key, describe(v))
		return "", false
	}
	if v.Tag == "!!null" {
		return "", true
	}
	return v.Value, true
}

// globs checks the value of paths or ignore: a list of doublestar globs
// relative to the repository root, or one string of them separated by commas
// (the form Claude Code also accepts). A glob may start with one "!" to
// negate it, as hunks.NewPathFilter reads them. Null is an empty list.
func (p *parser) globs(key string, v *yaml.Node) []string {
	v = resolve(v)
	type glob struct {
		text  string
		line  int
		label string
	}
	var list []glob
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
		return nil
	case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
		for i, g := range splitGlobs(v.Value) {
			list = append(list, glob{g, v.Line + 1, fmt.Sprintf("%s[%d]", key, i)})
		}
	case v.Kind == yaml.SequenceNode:
		for i, item := range v.Content {
			item = resolve(item)
			label := fmt.Sprintf("%s[%d]", key, i)
			if item.Kind != yaml.ScalarNode || item.Tag != "!!str" {
				p.addf(item.Line+1, "%s must be a glob string, not %s", label, describe(item))
				continue
			}
			list = append(list, glob{item.Value, item.Line + 1, label})
		}
	default:
		p.addf(v.Line+1, "%s must be a list of globs (like %s: [\"**/*.go\"]), not %s", key, key, describe(v))
		return nil
	}
	var out []string
	for _, g := range list {
		bare := strings.TrimPrefix(g.text, "!")
		switch {
		case strings.TrimSpace(bare) == "":
			p.addf(g.line, "%s is empty", g.label)
		case !doublestar.ValidatePattern(bare):
			p.addf(g.line, "%s: invalid glob %q", g.label, g.text)
		case strings.HasPrefix(bare, "/") || strings.HasPrefix(bare, "./"):
			p.addf(g.line, "%s: glob %q must be relative to the repository root, without a leading / or ./", g.label, g.text)
		default:
			out = append(out, g.text)
		}
	}
	return out
}

// splitGlobs splits a comma-separated list of globs, leaving the commas of
// "{a,b}" alternatives alone, and trims spaces around each glob.
func splitGlobs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // an escaped character is never a separator
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// resolve follows an alias to the node it names. An alias names an anchor
// defined before it, so following one step never loops.
func resolve(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// describe names the YAML type of a node for a problem message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int":
			return "the number " + n.Value
		case "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		}
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
	return "an unknown YAML value"
}
