package bot

import "slices"

// Supersedes reports whether a later command newer, run on the same pull
// request, does all that an earlier older would: a review of every
// configured skill covers an earlier review or resume (a fresh review
// answers every item a resume would finish); a review with --skill
// covers an earlier review whose skills are all among its own; a resume
// covers an earlier resume. Only reviews and resumes supersede: they
// spend the model budget on the same head, and the later one runs on the
// head the earlier would have reviewed, or a newer one.
func Supersedes(newer, older Command) bool {
	if older.Kind != Review && older.Kind != Resume {
		return false
	}
	switch newer.Kind {
	case Review:
		if len(newer.Skills) == 0 {
			return true
		}
		return older.Kind == Review && len(older.Skills) > 0 &&
			!slices.ContainsFunc(older.Skills, func(s string) bool { return !slices.Contains(newer.Skills, s) })
	case Resume:
		return older.Kind == Resume
	}
	return false
}
