package hunks

import (
	"fmt"
)

// VerifiedSource wraps read so a file is used for context only when its
// lines agree with the diff's new side; otherwise (the working tree moved
// on, or the diff came from elsewhere) Prepare falls back to the diff alone.
func VerifiedSource(files []*File, read func(string) ([]byte, error)) func(string) ([]byte, error) {
	byPath := map[string]*File{}
	for _, f := range files {
		if f.NewPath != "" {
			byPath[f.NewPath] = f
		}
	}
	return func(path string) ([]byte, error) {
		f := byPath[path]
		if f == nil {
			return nil, fmt.Errorf("%s is not in the diff", path)
		}
		data, err := read(path)
		if err != nil {
			return nil, err
		}
		if err := agrees(f, splitLines(string(data))); err != nil {
			return nil, err
		}
		return data, nil
	}
}

// agrees checks that lines, a file's content split into lines (splitLines),
// hold the new side of f's diff: every context and added line at its line
// number.
func agrees(f *File, lines []string) error {
	for _, frag := range f.Fragments {
		for _, l := range frag.Lines {
			if l.Op == Delete {
				continue
			}
			if l.NewLine < 1 || l.NewLine > len(lines) || lines[l.NewLine-1] != l.Text {
				return fmt.Errorf("%s does not match the diff at line %d", f.Path(), l.NewLine)
			}
		}
	}
	return nil
}
