package hunks

import (
	"fmt"
	"strings"
)

// GitHubFile is one file of a pull request as GitHub's files API lists it
// (GET /repos/{owner}/{repo}/pulls/{pull_number}/files): its Patch is the
// file's hunks alone, without the "diff --git" and "---"/"+++" header,
// and is empty for a binary file, a file whose diff is too large, or one
// that was only renamed.
type GitHubFile struct {
	Path         string // the file's (new) name
	PreviousPath string // the old name of a renamed or copied file
	Status       string // added, removed, modified, renamed, copied, changed, unchanged
	Patch        string
}

// ParseGitHubPatch parses one file of the files API into a File: the
// status and paths come from the API's fields, the fragments from the
// patch. A file without a patch has no fragments.
func ParseGitHubPatch(gf GitHubFile) (*File, error) {
	f := &File{OldPath: gf.Path, NewPath: gf.Path, Status: Modified}
	switch gf.Status {
	case "added":
		f.Status, f.OldPath = Added, ""
	case "removed":
		f.Status, f.NewPath = Deleted, ""
	case "renamed":
		f.Status, f.OldPath = Renamed, gf.PreviousPath
	case "copied":
		f.Status, f.OldPath = Copied, gf.PreviousPath
	}
	patch := strings.TrimRight(gf.Patch, "\n")
	if patch == "" {
		return f, nil
	}
	if !strings.HasPrefix(patch, "@@ ") {
		return nil, fmt.Errorf("%s: GitHub patch does not start with a hunk header", gf.Path)
	}
	// The patch is a traditional unified diff's body: give it the minimal
	// "---"/"+++" frame so the one diff parser reads it.
	parsed, err := Parse(strings.NewReader("--- a/f\n+++ b/f\n" + patch + "\n"))
	if err != nil {
		return nil, fmt.Errorf("%s: GitHub patch: %w", gf.Path, err)
	}
	if len(parsed) != 1 {
		return nil, fmt.Errorf("%s: GitHub patch: %d files, want 1", gf.Path, len(parsed))
	}
	f.Fragments = parsed[0].Fragments
	return f, nil
}

// ParseGitHub parses every file of the files API (ParseGitHubPatch).
func ParseGitHub(files []GitHubFile) ([]*File, error) {
	out := make([]*File, 0, len(files))
	for _, gf := range files {
		f, err := ParseGitHubPatch(gf)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// LineRange is an inclusive range of new-side lines.
type LineRange struct{ Start, End int }

// Anchors maps a path to the new-side (RIGHT) line ranges of its hunks: the
// lines GitHub accepts review comments on.
type Anchors map[string][]LineRange

// AnchorsOf lists the anchors of files: per new path, the new-side range of
// each fragment that has new-side lines.
func AnchorsOf(files []*File) Anchors {
	a := Anchors{}
	for _, f := range files {
		if f.NewPath == "" {
			continue
		}
		for _, fr := range f.Fragments {
			if fr.NewLines > 0 {
				a[f.NewPath] = append(a[f.NewPath], LineRange{Start: fr.NewStart, End: fr.NewStart + fr.NewLines - 1})
			}
		}
	}
	return a
}
