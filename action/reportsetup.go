package action

// Bounds on what a report file says of the review's setup (issue 23): the
// repository instructions its requests carried and the skill files it
// skipped. Like the rest of the file, they are untrusted (the analyze run
// executed the pull request's workflow); every sink renders them
// neutralised, and these bounds keep them to what warden writes.
const (
	maxReportSetupEntries = 10_000 // skipped skills, skill warnings, instruction sources and notes, each
	maxReportItemSources  = 100    // instructions one item names
)

// checkSetup checks the report's instructions, skipped skills and skill
// warnings against the bounds.
func checkSetup(doc *originReport) error {
	if err := checkInstructions(doc); err != nil {
		return err
	}
	if len(doc.SkippedSkills) > maxReportSetupEntries || len(doc.SkillWarnings) > maxReportSetupEntries {
		return reportErrorf("more than %d skipped skills or skill warnings", maxReportSetupEntries)
	}
	for i, s := range doc.SkippedSkills {
		if len(s.Skill) > maxReportName || len(s.File) > maxReportPath || len(s.Reason) > maxReportName || len(s.Message) > maxReportText {
			return reportErrorf("skipped_skills[%d]: text longer than warden writes", i)
		}
	}
	for i, w := range doc.SkillWarnings {
		if len(w.File) > maxReportPath || len(w.Message) > maxReportText {
			return reportErrorf("skill_warnings[%d]: text longer than warden writes", i)
		}
	}
	return nil
}

// checkInstructions checks the report's instructions and the names each
// item gives of them.
func checkInstructions(doc *originReport) error {
	if in := doc.Instructions; in != nil {
		if len(in.Sources) > maxReportSetupEntries || len(in.Notes) > maxReportSetupEntries {
			return reportErrorf("instructions: more than %d sources or notes", maxReportSetupEntries)
		}
		if len(in.From) > maxReportPath || len(in.NotRead) > maxReportText || len(in.Mode) > maxReportName {
			return reportErrorf("instructions: text longer than warden writes")
		}
		for i, s := range in.Sources {
			if len(s.Source) > maxReportPath || len(s.AppliesTo) > maxReportText {
				return reportErrorf("instructions.sources[%d]: text longer than warden writes", i)
			}
		}
		for i, n := range in.Notes {
			if len(n) > maxReportText {
				return reportErrorf("instructions.notes[%d]: text longer than warden writes", i)
			}
		}
	}
	for i, it := range doc.Items {
		if len(it.Instructions) > maxReportItemSources {
			return reportErrorf("items[%d]: more than %d instructions", i, maxReportItemSources)
		}
		for _, s := range it.Instructions {
			if len(s) > maxReportPath {
				return reportErrorf("items[%d]: an instruction's name longer than warden writes", i)
			}
		}
	}
	return nil
}
