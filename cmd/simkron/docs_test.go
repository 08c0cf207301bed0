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
