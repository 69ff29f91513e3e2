package hunks

import (
	"regexp"
	"strings"
)

// blockLanguages are the languages whose context is trimmed to the
// enclosing block, with the regexp that finds a line that opens one: it
// ends in "{", "(", "[" or ":" (":" also for case labels), before an
// optional trailing line comment. Indentation is what the rule reads, so it
// holds for brace languages formatted as usual and for Python.
var blockLanguages = func() map[string]*regexp.Regexp {
	slashes := regexp.MustCompile(`[{(\[:]\s*(//.*|/\*.*\*/\s*)?$`)
	hash := regexp.MustCompile(`[{(\[:]\s*(#.*)?$`)
	m := map[string]*regexp.Regexp{"Python": hash}
	for _, l := range []string{"Go", "C", "C++", "C#", "Java", "JavaScript", "TypeScript", "Rust",
		"Kotlin", "Scala", "Swift", "PHP", "Dart", "Objective-C", "Objective-C++", "Groovy", "Zig"} {
		m[l] = slashes
	}
	return m
}()

// trimToBlock cuts a chunk's context to the block around it, when a cheap
// rule finds it (see the package doc, "Context"). It only ever removes
// lines.
func trimToBlock(ch *Chunk) {
	opens, ok := blockLanguages[ch.Language]
	if !ok || (len(ch.Before) == 0 && len(ch.After) == 0) {
		return
	}
	// The chunk's lines before its first top-level (column 0) line sit in
	// the block Before shows; those after its last one, in the block After
	// shows. Without a top-level line, both are the whole chunk.
	first, last := -1, -1
	for i, l := range ch.Lines {
		if !blank(l.Text) && indent(l.Text) == 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	inside := first < 0
	if inside {
		first, last = len(ch.Lines), -1
	}
	if least(ch.Lines) < 0 {
		return // blank lines only
	}
	mb, ma := max(least(ch.Lines[:first]), 0), max(least(ch.Lines[last+1:]), 0)
	end := trimBefore(ch, mb, inside, opens)
	trimAfter(ch, ma, end, opens)
	for len(ch.Before) > 0 && blank(ch.Before[0].Text) {
		ch.Before = ch.Before[1:]
	}
	for len(ch.After) > 0 && blank(ch.After[len(ch.After)-1].Text) {
		ch.After = ch.After[:len(ch.After)-1]
	}
	if len(ch.Before) == 0 {
		ch.Before = nil
	}
	if len(ch.After) == 0 {
		ch.After = nil
	}
}

// trimBefore cuts Before to the header of the block the chunk's first lines
// sit in (indented mb), or, at the top level, to after the previous
// declaration. It returns the indentation at which After must end when the
// chunk lies wholly inside the block it found; -1 otherwise.
func trimBefore(ch *Chunk, mb int, inside bool, opens *regexp.Regexp) int {
	if mb > 0 {
		h := header(ch.Before, mb, opens)
		if h < 0 {
			return -1
		}
		ch.Before = ch.Before[h:]
		if inside {
			return indent(ch.Before[0].Text)
		}
		return -1
	}
	// At the top level: the previous declaration ends at the nearest line
	// before the chunk that closes a block or is indented.
	for i := len(ch.Before) - 1; i >= 0; i-- {
		if t := ch.Before[i].Text; !blank(t) && (indent(t) > 0 || closer(t)) {
			ch.Before = ch.Before[i+1:]
			break
		}
	}
	return -1
}

// trimAfter cuts After at the end of the block the chunk's last lines sit
// in (indented ma; end, when not negative, is where that block's closing
// line is indented), or, at the top level, after a top-level closing line
// or before the next top-level line that opens a block.
func trimAfter(ch *Chunk, ma, end int, opens *regexp.Regexp) {
	if ma > 0 {
		if end < 0 {
			end = ma - 1
		}
		for i, l := range ch.After {
			if blank(l.Text) || indent(l.Text) > end {
				continue
			}
			if closer(l.Text) {
				i++
			}
			ch.After = ch.After[:i]
			return
		}
		return
	}
	for i, l := range ch.After {
		if blank(l.Text) || indent(l.Text) > 0 {
			continue
		}
		if closer(l.Text) {
			ch.After = ch.After[:i+1]
			return
		}
		if opens.MatchString(l.Text) {
			ch.After = ch.After[:i]
			return
		}
	}
}

// least returns the least indentation of the non-blank lines; -1 when all
// are blank (or there are none).
func least(lines []Line) int {
	m := -1
	for _, l := range lines {
		if !blank(l.Text) && (m < 0 || indent(l.Text) < m) {
			m = indent(l.Text)
		}
	}
	return m
}

// header returns the index in before of the line that opens the block
// holding lines indented m: the nearest non-blank line indented less than
// m, when it opens a block. A header that continues a construct ("} else {",
// "elif x:", "):" closing a long signature) is followed back to the line
// that starts it, and a lone "{" to the line above it. It returns -1 when
// the nearest less-indented line opens no block.
func header(before []ContextLine, m int, opens *regexp.Regexp) int {
	h := -1
	for i := len(before) - 1; i >= 0; i-- {
		if t := before[i].Text; !blank(t) && indent(t) < m {
			if !opens.MatchString(t) {
				return -1
			}
			h = i
			break
		}
	}
	if h < 0 {
		return -1
	}
	ind := indent(before[h].Text)
	if strings.TrimSpace(before[h].Text) == "{" { // Allman style: the header is the line above
		for k := h - 1; k >= 0; k-- {
			if !blank(before[k].Text) {
				return k
			}
		}
		return h
	}
	for k := h - 1; k >= 0 && continues(before[h].Text); k-- {
		if t := before[k].Text; !blank(t) && indent(t) == ind {
			h = k
		} else if !blank(t) && indent(t) < ind {
			break
		}
	}
	return h
}

// continues reports whether a line continues a construct begun above it.
func continues(s string) bool {
	t := strings.TrimSpace(s)
	if closer(t) {
		return true
	}
	for _, kw := range []string{"else", "elif ", "except", "finally", "catch"} {
		if strings.HasPrefix(t, kw) {
			return true
		}
	}
	return false
}

// closer reports whether a line starts by closing a bracket.
func closer(s string) bool {
	t := strings.TrimSpace(s)
	return t != "" && strings.ContainsRune("})]", rune(t[0]))
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// indent is a line's indentation in columns, a tab counting 4.
func indent(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 4
		default:
			return n
		}
	}
	return n
}
