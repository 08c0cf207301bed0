package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository's root, from this package's folder.
const repoRoot = "../.."

// repoFiles returns the repository's files (slash-separated, relative to
// its root) whose names match keep, leaving out .git and the folders Go
// leaves out (testdata is kept: its configs are the tests' data).
func repoFiles(t *testing.T, keep func(path string) bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == "out" || strings.HasPrefix(d.Name(), "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if keep(rel) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sep is what may stand between the words of a citation that a comment
// wraps: blanks, line breaks and the comment markers of Go and TOML.
const sep = `(?:\s|//|#)*`

var (
	// citation is a note of the repository's docs named in code, with the
	// sections cited, if any ("docs/reference/ne2000.md sec. 7-11",
	// "docs/reference/atm-taxi.md secs. 4-5", "... section 9").
	citation = regexp.MustCompile(`docs/[\w./-]*\.md` +
		`(?:,?` + sep + `(?:secs?\.|sections?)` + sep +
		`(\d+(?:\.\d+)?(?:` + sep + `(?:-|–|,|and)` + sep + `\d+(?:\.\d+)?)*))?`)
	// oldCitation is a citation of notes that lived outside the
	// repository: a bare note name, the old design file, "shared
	// reference", a path into a shared folder.
	oldCitation = regexp.MustCompile(`(?:^|[^\w/.-])(?:ne2000|atm-taxi|via|osi-top|inet-notes|slurm-single-node)\.md|DESIGN\.md|shared` + sep + `reference|\.\./shared/|/shared/`)
	sectionNum  = regexp.MustCompile(`\d+(?:\.\d+)?`)
	heading     = regexp.MustCompile(`(?m)^#{2,4} (\d+(?:\.\d+)?)\.? `)
)

// TestCitations: every citation in the code, the configs and the CI
// scripts (comments and strings) of the design or a reference note names
// a file of the repository, and each section it cites is a numbered
// heading of that file; nothing cites the notes by the names and places
// they had outside the repository.
func TestCitations(t *testing.T) {
	files := repoFiles(t, func(p string) bool {
		switch filepath.Ext(p) {
		case ".go", ".toml", ".tcl", ".sh":
			return true
		}
		return strings.HasPrefix(p, ".ci/")
	})
	headings := map[string]map[string]bool{}
	sections := func(doc string) map[string]bool {
		if h, ok := headings[doc]; ok {
			return h
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, doc))
		if err != nil {
			headings[doc] = nil
			return nil
		}
		h := map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(string(data), -1) {
			h[m[1]] = true
		}
		headings[doc] = h
		return h
	}
	cited := 0
	for _, f := range files {
		if f == "cmd/simkron/docs_test.go" {
			continue // the patterns and their examples
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		line := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
		for _, m := range citation.FindAllStringSubmatchIndex(text, -1) {
			cited++
			doc := text[m[0]:m[1]]
			doc = doc[:strings.Index(doc, ".md")+3]
			h := sections(doc)
			if h == nil {
				t.Errorf("%s:%d: cites %s, which is not in the repository", f, line(m[0]), doc)
				continue
			}
			if m[2] < 0 {
				continue
			}
			for _, n := range sectionNum.FindAllString(text[m[2]:m[3]], -1) {
				if !h[n] {
					t.Errorf("%s:%d: cites %s sec. %s, which has no heading numbered %s", f, line(m[0]), doc, n, n)
				}
			}
		}
		for _, m := range oldCitation.FindAllStringIndex(text, -1) {
			t.Errorf("%s:%d: %q cites a note outside the repository: cite docs/design.md or docs/reference/NOTE.md", f, line(m[0]), strings.TrimSpace(text[m[0]:m[1]]))
		}
	}
	if cited < 50 {
		t.Errorf("only %d citations found: the pattern no longer sees them", cited)
	}
	t.Logf("%d citations in %d files", cited, len(files))
}

// TestCitationPattern holds the citation pattern to the forms the code
// uses, wrapped across comment lines or not.
func TestCitationPattern(t *testing.T) {
	for _, tc := range []struct{ text, doc, secs string }{
		{"(docs/reference/ne2000.md sec. 13).", "docs/reference/ne2000.md", "13"},
		{"(docs/reference/ne2000.md sec. 7-11).", "docs/reference/ne2000.md", "7-11"},
		{"(see docs/reference/ne2000.md, sec. 12).", "docs/reference/ne2000.md", "12"},
		{"docs/reference/atm-taxi.md secs. 4-5): a", "docs/reference/atm-taxi.md", "4-5"},
		{"docs/reference/ne2000.md sections 1-3). The", "docs/reference/ne2000.md", "1-3"},
		{"docs/reference/ne2000.md sec. 4, 8): 256", "docs/reference/ne2000.md", "4, 8"},
		{"docs/reference/atm-taxi.md sec. 6.4), as", "docs/reference/atm-taxi.md", "6.4"},
		{"(docs/reference/via.md secs. 3,\n// 5) — as", "docs/reference/via.md", "3,\n// 5"},
		{"docs/reference/osi-top.md, secs.\n# 4-10; issue", "docs/reference/osi-top.md", "4-10"},
		{"(docs/design.md).", "docs/design.md", ""},
		{"(docs/reference/via.md): the VI", "docs/reference/via.md", ""},
	} {
		m := citation.FindStringSubmatch(tc.text)
		if m == nil {
			t.Errorf("%q: no citation found", tc.text)
			continue
		}
		if doc := m[0][:strings.Index(m[0], ".md")+3]; doc != tc.doc || m[1] != tc.secs {
			t.Errorf("%q: found %q sections %q, want %q sections %q", tc.text, doc, m[1], tc.doc, tc.secs)
		}
	}
	for _, old := range []string{"(ne2000.md sec. 5)", "shared reference atm-taxi.md", "the shared\n// reference via.md", "DESIGN.md's", "../shared/peers/x.sh"} {
		if !oldCitation.MatchString(old) {
			t.Errorf("%q is not seen as an old citation", old)
		}
	}
	if oldCitation.MatchString("docs/reference/ne2000.md sec. 5") {
		t.Error("a citation of the repository's note is taken for an old one")
	}
}

var (
	// mdLink is a Markdown link's target.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// repoPath is a path into the repository as the docs write it: from
	// one of its top-level folders.
	repoPath = regexp.MustCompile("(?:^|[\\s`'\"(=\\[])((?:\\.ci|cmd|configs|docs|internal|sim|memory|cpu|devices|ethersim|stack|annotations|config|machine|workload|report|sweep)/[\\w./*-]*)")
	// configName is a config or script named by its file name alone, in
	// a code span.
	configName = regexp.MustCompile("`([\\w.-]+\\.(?:toml|tcl))`")
	// codeFile is a config or script named in a command of a code block.
	codeFile = regexp.MustCompile(`(?:^|\s)([\w./-]+\.(?:toml|tcl))(?:\s|$)`)
	// absPath is an absolute path of a machine.
	absPath = regexp.MustCompile("(?:^|[\\s`'\"(=])(/[a-z][\\w.-]*(?:/[\\w.*%-]+)*)")
)

// absAllowed are the absolute paths the docs may name: the system's own,
// which every machine has (and Slurm's, which .ci/slurm writes).
var absAllowed = []string{"/dev/", "/proc/", "/etc/slurm/", "/run/munge", "/var/log/slurm", "/usr/"}

// TestDocsNameShippedFiles: every file and folder the README and the docs
// name is in the repository: links, paths from a top-level folder, and
// configs and scripts named by their file name alone. They name no path
// of a machine outside the repository (but the system's own).
func TestDocsNameShippedFiles(t *testing.T) {
	docs := repoFiles(t, func(p string) bool {
		return p == "README.md" || strings.HasPrefix(p, "docs/") && strings.HasSuffix(p, ".md")
	})
	configs := map[string]bool{}
	for _, p := range repoFiles(t, func(p string) bool { return strings.HasPrefix(p, "configs/") }) {
		configs[filepath.Base(p)] = true
	}
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(repoRoot, p))
		return err == nil
	}
	named := 0
	for _, d := range docs {
		data, err := os.ReadFile(filepath.Join(repoRoot, d))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		line := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
		for _, m := range mdLink.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[2]:m[3]]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if !strings.ContainsAny(target, "./") {
				continue // Go's generics in code, "Find[T](h)"
			}
			named++
			if p := filepath.ToSlash(filepath.Join(filepath.Dir(d), target)); !exists(p) {
				t.Errorf("%s:%d: links to %s, which is not in the repository", d, line(m[0]), target)
			}
		}
		for _, m := range repoPath.FindAllStringSubmatchIndex(text, -1) {
			p := strings.TrimRight(text[m[2]:m[3]], ".,;:")
			if strings.ContainsAny(p, "*<{") || strings.Contains(p, "...") {
				continue
			}
			named++
			// The list of configs in experiments.md names files under
			// configs/ from there.
			if !exists(p) && !exists("configs/"+p) {
				t.Errorf("%s:%d: names %s, which is not in the repository", d, line(m[0]), p)
			}
		}
		for _, m := range configName.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			if strings.ContainsAny(name, "/") || name == "experiment.toml" {
				continue // experiment.toml: what compare --out writes
			}
			named++
			if !configs[name] {
				t.Errorf("%s:%d: names %s, which no folder under configs/ has", d, line(m[0]), name)
			}
		}
		for _, m := range absPath.FindAllStringSubmatchIndex(text, -1) {
			p := text[m[2]:m[3]]
			ok := false
			for _, a := range absAllowed {
				ok = ok || strings.HasPrefix(p, a)
			}
			if !ok {
				t.Errorf("%s:%d: names %s, a path outside the repository", d, line(m[0]), p)
			}
		}
		for _, m := range codeFile.FindAllStringSubmatchIndex(codeLines(text), -1) {
			p := text[m[2]:m[3]]
			base := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
			if base == strings.ToUpper(base) || filepath.Base(p) == "experiment.toml" {
				continue // a placeholder (FILE.tcl), or what compare --out writes
			}
			named++
			if !exists(p) && !exists("configs/"+p) {
				t.Errorf("%s:%d: a command names %s, which is not in the repository", d, line(m[0]), p)
			}
		}
		if i := strings.Index(text, "../shared"); i >= 0 {
			t.Errorf("%s:%d: names a folder beside the repository", d, line(i))
		}
	}
	if named < 100 {
		t.Errorf("only %d names found in %d files: the patterns no longer see them", named, len(docs))
	}
	t.Logf("%d names in %d files", named, len(docs))
}

// codeLines returns text with every line that is not in a code block
// (fenced, or indented by four blanks) blanked out, its length kept so
// that offsets stay those of text.
func codeLines(text string) string {
	var b strings.Builder
	fenced := false
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			b.WriteString(strings.Repeat(" ", len(l)-1) + l[len(l)-1:])
			continue
		}
		if fenced || strings.HasPrefix(l, "    ") {
			b.WriteString(l)
			continue
		}
		// Blanks byte for byte, so that offsets stay those of text.
		blank := []byte(l)
		for i, c := range blank {
			if c != '\n' {
				blank[i] = ' '
			}
		}
		b.Write(blank)
	}
	return b.String()
}
