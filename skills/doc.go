// Package skills owns what a repository tells warden's reviewer besides
// the change: its review skills and its instructions for reviewers.
//
// Skills: the SKILL.md file format (YAML frontmatter with a name, a
// description and optional path globs, followed by Markdown instructions
// for the model), its validation with a file and line for every problem
// and a warning for every key it does not read, discovery of a
// repository's review skills (every skill under .warden/skills; under
// .agents/skills and .claude/skills only those whose frontmatter declares
// them review skills, metadata.warden: review), what discovery skipped and
// why, the built-in skills embedded in the binary, and the catalog that
// merges the two.
//
// Instructions: reading the repository's guidance files (AGENTS.md and
// CLAUDE.md of each directory, GitHub Copilot's repository-wide and
// path-specific files) and the files warden.toml's [[instructions]] name,
// from a tree the caller trusts; which of them apply to a path, within what
// budget, and how they enter a prompt is review's.
//
// It is a leaf: it must not import any other warden package, go-openai or
// go-github. It reads only through the fs.FS it is given, never the
// environment, flags or the process's working directory. Its only
// third-party imports are gopkg.in/yaml.v3 (frontmatter, with line numbers)
// and github.com/bmatcuk/doublestar/v4 (globs).
package skills
