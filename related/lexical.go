package related

import (
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/org/warden/hunks"
)

// defRE matches a definition line and captures the name it defines.
var defRE = regexp.MustCompile(`^(\s*)(?:(?:export|default|pub(?:\([a-z]+\))?|public|private|protected|static|async|abstract|final|override|inline)\s+)*(?:def|class|function\*?|fn|func|const|let|var|interface|type|struct|enum|trait|module|sub|proc)\s+([A-Za-z_][A-Za-z0-9_]*)`)

// lexDef is a definition the lexical index found.
type lexDef struct {
	name, path string
	start, end int
	text       string
}

// lexDefs indexes the definitions of one file.
func lexDefs(p string, src []byte) []lexDef {
	ls := strings.Split(string(src), "\n")
	indentBlocks := strings.HasSuffix(p, ".py")
	var out []lexDef
	for i, l := range ls {
		m := defRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		end := blockEnd(ls, i, len(m[1]), indentBlocks)
		out = append(out, lexDef{name: m[2], path: p, start: i + 1, end: end + 1, text: strings.Join(ls[i:end+1], "\n") + "\n"})
	}
	return out
}

// blockEnd is the 0-based last line of the block that starts at line i
// with the given indentation: the line before the next line indented no
// deeper (indentBlocks), else the line where braces opened on or after i
// balance again; a line with neither ends at i. At most MaxBlockLines.
func blockEnd(ls []string, i, indent int, indentBlocks bool) int {
	last := min(len(ls)-1, i+MaxBlockLines-1)
	if indentBlocks {
		end := i
		for j := i + 1; j <= last; j++ {
			t := strings.TrimSpace(ls[j])
			if t == "" {
				continue
			}
			if len(ls[j])-len(strings.TrimLeft(ls[j], " \t")) <= indent {
				break
			}
			end = j
		}
		return end
	}
	depth, opened := 0, false
	for j := i; j <= last; j++ {
		depth += strings.Count(ls[j], "{") - strings.Count(ls[j], "}")
		opened = opened || strings.Contains(ls[j], "{")
		if opened && depth <= 0 {
			return j
		}
		if !opened && j > i+1 { // no brace on the definition's first lines: one statement
			return i
		}
	}
	return last
}

// lexParts is the lexical version of goParts.
func lexParts(c *hunks.Chunk, src []byte, changed map[int]string, repo fs.FS, ix *Index, whole bool) []Part {
	own := lexDefs(c.Path, src)
	var parts []Part
	if !whole {
		// The innermost definition above the chunk whose block reaches it.
		var best *lexDef
		for i := range own {
			d := &own[i]
			if d.start <= c.StartLine && d.end >= c.StartLine && (best == nil || d.start > best.start) {
				best = d
			}
		}
		if best != nil {
			parts = append(parts, Part{Kind: Enclosing, Path: c.Path, Name: best.name, StartLine: best.start, EndLine: best.end, Text: best.text})
		}
	}
	var names []string
	nums := make([]int, 0, len(changed))
	for n := range changed {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, n := range nums {
		for _, id := range identRE.FindAllString(changed[n], -1) {
			if len(id) > 1 && !slices.Contains(names, id) {
				names = append(names, id)
			}
		}
	}
	index := own
	dir := path.Dir(c.Path)
	if dir == "." {
		dir = ""
	}
	for _, sf := range ix.siblings(repo, dir, path.Ext(c.Path), c.Path, nil) {
		index = append(index, ix.lexDefsOf(sf.path, sf.data)...)
	}
	for _, name := range names {
		for _, d := range index {
			if d.name == name && !(d.path == c.Path && d.start <= c.StartLine && d.end >= c.EndLine) {
				parts = append(parts, Part{Kind: Declaration, Path: d.path, Name: name, StartLine: d.start, EndLine: d.end, Text: d.text})
			}
		}
	}
	return parts
}
