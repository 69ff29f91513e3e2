package fakegithub

import (
	"cmp"
	"slices"
	"strings"
)

// Where a review comment sits after the pull request moves on, as GitHub
// decides it. A comment is made on a line of a file at a commit (its
// original_commit_id and original_line). When the head moves, GitHub
// follows the line through the change from that commit to the new head:
// a line that did not change moves with the lines added or removed above
// it, and the comment stays current there (line and position follow it;
// commit_id becomes the new head); when the commented lines themselves
// changed or were removed, the comment is outdated: its position and line
// are gone ("position: The line index in the diff to which the comment
// applies" is null, and GraphQL's PullRequestReviewThread.isOutdated,
// "Indicates whether this thread was outdated by newer changes", is
// true), and it keeps only its original_line and original_commit_id. A
// line that no longer shows in the pull request's diff (its change was
// reverted) cannot be placed either: outdated too. (REST docs, "Review
// comments": position, original_position, line, original_line, commit_id,
// original_commit_id; GraphQL schema, PullRequestReviewThread.isOutdated,
// PullRequestReviewComment.outdated. GitHub moving a comment's position
// with lines shifted above it, and outdating it when the line changed, is
// what charignon/github-review#79 observed of the API.)
//
// The fake follows lines when it knows both commits' contents of the file
// (File.Content of the pull request at each head, recorded by
// AddPullRequest); without them it can only say whether the comment's
// line is still in the current diff.

// maxDiffLines bounds the part of a file the line diff compares after the
// common start and end are set aside; beyond it every line in between
// counts as changed (a comment there is outdated).
const maxDiffLines = 4000

// recordContents keeps the contents of pr's files at its head. Call with
// s.mu held.
func (s *Server) recordContents(pr *PullRequest) {
	for _, f := range pr.Files {
		if f.Content == "" && f.Status != "removed" {
			continue
		}
		if s.contents == nil {
			s.contents = map[string]map[string]string{}
		}
		if s.contents[pr.HeadSHA] == nil {
			s.contents[pr.HeadSHA] = map[string]string{}
		}
		s.contents[pr.HeadSHA][f.Filename] = f.Content
	}
}

// content is path's content at commit sha, if the fake knows it.
func (s *Server) content(sha, path string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.contents[sha][path]
	return c, ok
}

// placement is where a comment sits in the pull request's current diff.
type placement struct {
	line, startLine int // current lines; 0 when outdated (startLine: or single-line)
	outdated        bool
	commit          string // commit_id: the head when current, else the original commit
}

// place decides where review comment c on pr sits now.
func (s *Server) place(pr *PullRequest, c ReviewComment) placement {
	side := cmp.Or(c.Side, "RIGHT")
	orig := cmp.Or(c.CommitID, pr.HeadSHA)
	start := c.StartLine
	if start == 0 {
		start = c.Line
	}
	line, first := c.Line, start
	if orig != pr.HeadSHA && side == "RIGHT" {
		old, ok1 := s.content(orig, c.Path)
		cur, ok2 := s.content(pr.HeadSHA, c.Path)
		if ok1 && ok2 {
			var moved bool
			first, line, moved = follow(old, cur, start, c.Line)
			if !moved {
				return placement{outdated: true, commit: orig}
			}
		}
	}
	if !inDiff(pr, c.Path, side, line) || (c.StartLine > 0 && !inDiff(pr, c.Path, side, first)) {
		return placement{outdated: true, commit: orig}
	}
	p := placement{line: line, commit: pr.HeadSHA}
	if c.StartLine > 0 {
		p.startLine = first
	}
	return p
}

// inDiff reports whether line of side is in a hunk of path's patch.
func inDiff(pr *PullRequest, path, side string, line int) bool {
	for _, f := range pr.Files {
		if f.Filename == path {
			return slices.ContainsFunc(parseHunks(f.Patch), func(h hunk) bool { return h.has(side, line) })
		}
	}
	return false
}

// follow maps lines start..end (1-based) of old to cur: moved is false
// when one of them changed or was removed, or lines were inserted among
// them; otherwise first and last are their lines in cur.
func follow(old, cur string, start, end int) (first, last int, moved bool) {
	m := lineMap(splitLines(old), splitLines(cur))
	if start < 1 || end > len(m) || start > end {
		return 0, 0, false
	}
	for l := start; l <= end; l++ {
		n := m[l-1]
		if n < 0 || (l > start && n != m[l-2]+1) {
			return 0, 0, false
		}
	}
	return m[start-1] + 1, m[end-1] + 1, true
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// lineMap maps each line of a to its line in b (0-based), or -1 when the
// line changed or was removed: the lines of a longest common subsequence
// stay, after the common start and end are matched first.
func lineMap(a, b []string) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		m[pre] = pre
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		m[len(a)-1-suf] = len(b) - 1 - suf
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(ma) == 0 || len(mb) == 0 || len(ma) > maxDiffLines || len(mb) > maxDiffLines {
		return m
	}
	// lcs[i][j]: the longest common subsequence of ma[i:] and mb[j:].
	lcs := make([][]int32, len(ma)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(mb)+1)
	}
	for i := len(ma) - 1; i >= 0; i-- {
		for j := len(mb) - 1; j >= 0; j-- {
			if ma[i] == mb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < len(ma) && j < len(mb); {
		switch {
		case ma[i] == mb[j]:
			m[pre+i] = pre + j
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	return m
}
