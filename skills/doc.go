// Package skills owns warden's review skills: the SKILL.md file format
// (YAML frontmatter with a name, a description and optional path globs,
// followed by Markdown instructions for the model), its validation with a
// file and line for every problem, discovery of a repository's skills under
// .warden/skills, .agents/skills and .claude/skills, the built-in skills
// embedded in the binary, and the catalog that merges the two.
//
// It is a leaf: it must not import any other warden package, go-openai or
// go-github. It reads only through the fs.FS it is given, never the
// environment, flags or the process's working directory. Its only
// third-party imports are gopkg.in/yaml.v3 (frontmatter, with line numbers)
// and github.com/bmatcuk/doublestar/v4 (globs).
package skills
