package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"simkron/internal/testtool"
)

// readmeCommand is a shell command of the README: a line of a fenced
// ```sh block, or a "$ " line of a ```console block with the output the
// README shows after it.
type readmeCommand struct {
	line int    // in the README
	text string // as the README has it, the "$ " and a trailing "# exit N" left out
	exit int    // the status the README says it exits with ("# exit N"; 0 by default)
	// output is what the README shows after a console command: each line
	// must come in the command's output (standard output and error, each
	// line's trailing blanks left out), in this order; "..." stands for
	// any lines.
	output []string
}

var exitComment = regexp.MustCompile(`\s+#\s*exit\s+(\d+)\s*$`)

// readmeCommands returns the commands of the fenced sh and console blocks
// of a README. A fenced block of another kind holding a command is an
// error: every command a reader may copy is run. (The synopsis of the
// command line is an indented block, not a fenced one, and is not run.)
func readmeCommands(text string) ([]readmeCommand, error) {
	var cmds []readmeCommand
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		info = strings.TrimSpace(info)
		start := i + 1
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
		}
		if i == len(lines) {
			return nil, fmt.Errorf("README:%d: a fenced block that does not end", start)
		}
		block := lines[start:i]
		switch info {
		case "sh":
			for j := 0; j < len(block); j++ {
				l := block[j]
				if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
					continue
				}
				n := start + j + 1
				for strings.HasSuffix(l, `\`) && j+1 < len(block) {
					j++
					l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(block[j])
				}
				c, err := newReadmeCommand(n, l)
				if err != nil {
					return nil, err
				}
				cmds = append(cmds, c)
			}
		case "console":
			for j, l := range block {
				if c, ok := strings.CutPrefix(l, "$ "); ok {
					rc, err := newReadmeCommand(start+j+1, c)
					if err != nil {
						return nil, err
					}
					cmds = append(cmds, rc)
					continue
				}
				if len(cmds) == 0 || cmds[len(cmds)-1].line < start {
					return nil, fmt.Errorf("README:%d: output before any command in a console block", start+j+1)
				}
				last := &cmds[len(cmds)-1]
				last.output = append(last.output, strings.TrimRight(l, " \t"))
			}
		default:
			for j, l := range block {
				if strings.HasPrefix(strings.TrimSpace(l), "simkron ") || strings.HasPrefix(strings.TrimSpace(l), "go ") {
					return nil, fmt.Errorf("README:%d: a command in a fenced block of kind %q: put it in a sh or console block, so that it is run", start+j+1, info)
				}
			}
		}
	}
	return cmds, nil
}

func newReadmeCommand(line int, text string) (readmeCommand, error) {
	c := readmeCommand{line: line, text: strings.TrimSpace(text)}
	if m := exitComment.FindStringSubmatchIndex(c.text); m != nil {
		c.exit, _ = strconv.Atoi(c.text[m[2]:m[3]])
		c.text = strings.TrimSpace(c.text[:m[0]])
	}
	if c.text == "" {
		return c, fmt.Errorf("README:%d: an empty command", line)
	}
	return c, nil
}

// matchOutput says whether want's lines come in got, in order ("..."
// matching any lines), and if not which line is missing.
func matchOutput(got string, want []string) (missing string, ok bool) {
	var lines []string
	for _, l := range strings.Split(got, "\n") {
		lines = append(lines, strings.TrimRight(l, " \t"))
	}
	i := 0
	for _, w := range want {
		if w == "..." {
			continue
		}
		for i < len(lines) && lines[i] != w {
			i++
		}
		if i == len(lines) {
			return w, false
		}
		i++
	}
	return "", true
}

// readmeExempt are the README's commands this test does not run, and why.
var readmeExempt = map[string]string{
	"go test ./...": "the test suite this test belongs to",
}

// readmeLong are the README's commands that take minutes (the TOP study
// at the study's 10,000 messages a point): they run under CI=true, or
// with SIMKRON_README_LONG=1.
var readmeLong = []string{"configs/top-lower.toml", "configs/top-upper.toml"}

// TestReadmeCommands runs every command of the README, in order, as a
// reader would: "go install ./cmd/simkron" (into a folder of the test's,
// first on the PATH) and the go commands from the project's folder, the
// simkron commands from a folder of the test's holding the configs, so
// that their --out folders are written there. It checks each command's
// exit status (the README's "# exit N", else 0) and that the output the
// README shows after a console command is there. The commands
// readmeLong names take minutes and run only under CI=true or with
// SIMKRON_README_LONG=1; with -short the test is skipped.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("installs simkron and runs the README's commands")
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := readmeCommands(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) == 0 || cmds[0].text != "go install ./cmd/simkron" {
		t.Fatalf("the README's first command is not go install ./cmd/simkron, which the others need: %+v", cmds[:min(1, len(cmds))])
	}
	for text := range readmeExempt {
		if !strings.Contains(string(data), text) {
			t.Errorf("the README no longer has %q: take it out of readmeExempt", text)
		}
	}
	for _, l := range readmeLong {
		if !strings.Contains(string(data), l) {
			t.Errorf("the README no longer has %q: take it out of readmeLong", l)
		}
	}
	bin, work := t.TempDir(), t.TempDir()
	if err := os.Symlink(filepath.Join(root, "configs"), filepath.Join(work, "configs")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	long := testtool.CI() || os.Getenv("SIMKRON_README_LONG") == "1"
	for _, c := range cmds {
		t.Run(fmt.Sprintf("line%d", c.line), func(t *testing.T) {
			if why, ok := readmeExempt[c.text]; ok {
				t.Skipf("%s: not run here, %s", c.text, why)
			}
			for _, l := range readmeLong {
				if strings.Contains(c.text, l) && !long {
					t.Skipf("%s: takes minutes; runs under CI=true or with SIMKRON_README_LONG=1", c.text)
				}
			}
			dir := work
			if strings.HasPrefix(c.text, "go ") {
				dir = root
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", c.text)
			cmd.Dir, cmd.Env = dir, env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			status := 0
			if ee, ok := errors.AsType[*exec.ExitError](err); ok {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("README:%d: %s: %v", c.line, c.text, err)
			}
			t.Logf("README:%d: %s: exit %d in %v", c.line, c.text, status, time.Since(start).Round(time.Millisecond))
			if status != c.exit {
				t.Errorf("README:%d: %s exited %d, the README says %d:\n%s", c.line, c.text, status, c.exit, clip(out.String()))
			}
			if missing, ok := matchOutput(out.String(), c.output); !ok {
				t.Errorf("README:%d: %s: the output lacks the README's line %q:\n%s", c.line, c.text, missing, clip(out.String()))
			}
		})
		if c.text == "go install ./cmd/simkron" {
			if _, err := os.Stat(filepath.Join(bin, "simkron")); err != nil {
				t.Fatalf("go install ./cmd/simkron installed no simkron in GOBIN: %v", err)
			}
		}
	}
}

func TestReadmeCommandsParse(t *testing.T) {
	text := "intro\n\n```sh\ngo install ./cmd/simkron\n# a comment\n\nsimkron run a.toml \\\n  --out x\n```\n\n" +
		"    simkron synopsis [not run]\n\n```console\n$ simkron validate bad.toml    # exit 2\nbad.toml:7: x\n...\nbad.toml: 2 problems\n$ simkron version\n```\n"
	got, err := readmeCommands(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []readmeCommand{
		{line: 4, text: "go install ./cmd/simkron"},
		{line: 7, text: "simkron run a.toml  --out x"},
		{line: 14, text: "simkron validate bad.toml", exit: 2, output: []string{"bad.toml:7: x", "...", "bad.toml: 2 problems"}},
		{line: 18, text: "simkron version"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if _, err := readmeCommands("```text\nsimkron run x.toml\n```\n"); err == nil {
		t.Error("a command in a text block is not refused")
	}
	if _, err := readmeCommands("```sh\nsimkron run x.toml\n"); err == nil {
		t.Error("a block that does not end is not refused")
	}
	for _, tc := range []struct {
		out  string
		want []string
		ok   bool
	}{
		{"a\nb  \nc\n", []string{"a", "c"}, true},
		{"a\nb\nc\n", []string{"c", "a"}, false},
		{"a\nb\n", []string{"...", "b", "..."}, true},
		{"a\n", []string{"b"}, false},
	} {
		if _, ok := matchOutput(tc.out, tc.want); ok != tc.ok {
			t.Errorf("matchOutput(%q, %q) = %v, want %v", tc.out, tc.want, ok, tc.ok)
		}
	}
}
