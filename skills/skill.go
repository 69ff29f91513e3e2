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
	// Review is set when the frontmatter declares the skill a review skill
	// (metadata: {warden: review}): an agent's skill under .agents/skills or
	// .claude/skills runs only then (Discover).
	Review bool
	// Warnings are what is odd in the file but does not stop the skill: a
	// key warden does not know, which it ignores.
	Warnings Problems
}

// clone returns a deep copy of s.
func (s *Skill) clone() *Skill {
	c := *s
	c.Paths = slices.Clone(s.Paths)
	c.Ignore = slices.Clone(s.Ignore)
	c.Warnings = slices.Clone(s.Warnings)
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

// ReviewKey and ReviewValue are the frontmatter's declaration that a skill
// is a review skill: the key warden under the Agent Skills format's
// metadata mapping, with the value review. The format allows metadata with
// any string keys and values, so the declaration keeps the file valid for
// every other tool that reads it.
const (
	ReviewKey   = "metadata.warden"
	ReviewValue = "review"
)

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
// negates one), metadata (a mapping; its key warden, when set to review,
// declares a review skill: Skill.Review), and the keys of the Agent Skills
// format and Claude Code that warden ignores (license, compatibility,
// allowed-tools, version, argument-hint, disable-model-invocation,
// user-invocable, model, effort, context, agent, hooks, shell). Any other
// key, and a metadata.warden other than review, is a warning
// (Skill.Warnings): warden ignores it and the skill still loads. A UTF-8
// byte order mark and CRLF line endings are accepted.
//
// When anything is wrong Parse returns a nil Skill and a Problems error with
// every problem it found, and the warnings, in line order. It never panics.
func Parse(file string, data []byte) (*Skill, error) {
	r := parse(file, data)
	if len(r.problems) > 0 {
		return nil, r.problems
	}
	return r.skill, nil
}

// declaration is what a file's frontmatter says of being a review skill.
type declaration int

const (
	declUnknown       declaration = iota // no frontmatter could be read
	declNone                             // a frontmatter without metadata.warden: review
	declReview                           // metadata.warden: review
	declNoFrontmatter                    // the file has no frontmatter at all
)

// parser collects the problems and warnings of one file.
type parser struct {
	file     string
	problems Problems
	warnings Problems
	decl     declaration
}

func (p *parser) addf(line int, format string, args ...any) {
	p.problems = append(p.problems, Problem{File: p.file, Line: line, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) warnf(line int, format string, args ...any) {
	p.warnings = append(p.warnings, Problem{File: p.file, Line: line, Message: fmt.Sprintf(format, args...)})
}

// parsed is the result of parsing one file: the skill (nil with problems),
// the line of its name key (for duplicate problems found later), its
// problems (warnings included, in line order) and what it declares.
type parsed struct {
	skill    *Skill
	nameLine int
	problems Problems
	decl     declaration
}

// parse is Parse with the rest of what the file says.
func parse(file string, data []byte) (r parsed) {
	p := &parser{file: file}
	defer func() {
		// Nothing here should panic, but a skill file is user input and
		// yaml.v3 is a large parser: turn a panic into a problem.
		if v := recover(); v != nil {
			r = parsed{problems: append(p.problems, Problem{File: file, Message: fmt.Sprintf("internal error parsing the skill: %v", v)})}
		}
	}()
	skill, nameLine := p.parse(data)
	r.decl = p.decl
	if len(p.problems) == 0 {
		skill.Warnings = capProblems(file, sortProblems(p.warnings))
		r.skill, r.nameLine = skill, nameLine
		return r
	}
	r.problems = capProblems(file, sortProblems(append(p.problems, p.warnings...)))
	return r
}

func sortProblems(ps Problems) Problems {
	slices.SortStableFunc(ps, func(a, b Problem) int { return a.Line - b.Line })
	return ps
}

// capProblems keeps at most maxProblems of ps, the last saying how many
// more there were.
func capProblems(file string, ps Problems) Problems {
	if n := len(ps); n > maxProblems {
		return append(ps[:maxProblems-1:maxProblems-1], Problem{File: file, Message: fmt.Sprintf("%d more problems not shown", n-maxProblems+1)})
	}
	return ps
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
		p.decl = declNoFrontmatter
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
		p.yamlError(err, offset, closing)
		return 0
	}

	p.decl = declNone
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
		case "metadata":
			s.Review = p.metadata(resolve(v))
		default:
			if !slices.Contains(toleratedKeys, key) {
				p.warnf(kline, "unknown key %q, ignored: warden reads %s and metadata's key warden (the other keys of Agent Skills and Claude Code are ignored without a warning)",
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

// metadata reads the frontmatter's metadata mapping (the Agent Skills
// format's map of string keys to string values) for its key warden, and
// reports whether it declares a review skill. Whatever else metadata holds
// belongs to other tools.
func (p *parser) metadata(v *yaml.Node) bool {
	if v.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := resolve(v.Content[i]), resolve(v.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value != "warden" {
			continue
		}
		if val.Kind == yaml.ScalarNode && val.Value == ReviewValue {
			p.decl = declReview
			return true
		}
		p.warnf(val.Line+1, "%s is %s, ignored: %q is the one value warden reads (it makes the skill a review skill)", ReviewKey, describe(val), ReviewValue)
		return false
	}
	return false
}

// yamlError reports a YAML syntax error of the frontmatter at its file
// line (YAML line n is file line n+offset), kept inside the frontmatter,
// whose closing fence is on line closing.
func (p *parser) yamlError(err error, offset, closing int) {
	msg, line := err.Error(), 1
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		// yaml.v3 sometimes reports the line after the one at fault: keep
		// the line inside the frontmatter.
		line = min(max(n+offset, 2), closing)
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	if strings.Contains(msg, "did not find expected alphabetic or numeric character") {
		msg += ` (a value that starts with * or & must be quoted, like "**/*.go")`
	}
	p.addf(line, "invalid YAML in frontmatter: %s", msg)
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
