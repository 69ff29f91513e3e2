package fakegithub

import "slices"

// PassesRequiredCheck reports whether branch protection counts a completed
// check run with conclusion c as passing a required status check, so that
// the pull request may merge. GitHub counts success, neutral and skipped:
// "A job that is skipped will report its status as "Success". It will not
// prevent a pull request from merging, even if it is a required check"
// (https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/collaborating-on-repositories-with-code-quality-features/about-status-checks),
// and the same page's "Check statuses and conclusions" table says of
// neutral and skipped that they are "treated as a success". Every other
// conclusion (failure, action_required, cancelled, timed_out, stale)
// blocks the merge, and so does a check run that is not completed.
func PassesRequiredCheck(c string) bool {
	return slices.Contains([]string{"success", "neutral", "skipped"}, c)
}

// RequiredCheck is what branch protection sees of the required check name
// on commit sha: the newest check run of that name on the commit (GitHub
// shows and gates on the latest one), its conclusion ("" while it is not
// completed), and whether it passes. ok is false when there is none, which
// blocks a merge too.
func (s *Server) RequiredCheck(name, sha string) (run CheckRun, passes, ok bool) {
	runs := s.CheckRuns()
	for i := len(runs) - 1; i >= 0; i-- {
		if c := runs[i]; c.Name == name && c.HeadSHA == sha {
			return c, c.Status == "completed" && PassesRequiredCheck(c.Conclusion), true
		}
	}
	return CheckRun{}, false, false
}
