package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/pprof/profile"
)

// simkron run --cycles-profile changes no byte of what the run writes
// (result.json, the summary, the capture, standard output), and writes a
// profile that pprof reads, whose cycles are the busy cycles result.json
// reports, host by host; run twice, it is the same bytes. When the go
// command is at hand, `go tool pprof -top` reads the file and its total
// is those cycles.
func TestCyclesProfileFlag(t *testing.T) {
	const cfg = "../../configs/udp-ne2000.toml"
	plainDir := t.TempDir()
	st, plainOut, stderr := simkron(t, "run", "--out", plainDir, cfg)
	if st != exitOK {
		t.Fatalf("run exited %d: %s", st, stderr)
	}
	var profiles [][]byte
	for range 2 {
		dir := t.TempDir()
		prof := filepath.Join(dir, "prof", "cycles.pb.gz")
		st, out, stderr := simkron(t, "run", "--out", filepath.Join(dir, "out"), "--cycles-profile", prof, cfg)
		if st != exitOK {
			t.Fatalf("run --cycles-profile exited %d: %s", st, stderr)
		}
		if out != plainOut {
			t.Errorf("standard output differs with --cycles-profile")
		}
		plain, with := readDir(t, plainDir), readDir(t, filepath.Join(dir, "out"))
		if len(with) != len(plain) || len(plain) < 3 {
			t.Errorf("wrote %d files with --cycles-profile, %d without; want the same, at least 3", len(with), len(plain))
		}
		for name, b := range plain {
			if !bytes.Equal(b, with[name]) {
				t.Errorf("%s differs with --cycles-profile", name)
			}
		}
		b, err := os.ReadFile(prof)
		if err != nil {
			t.Fatal(err)
		}
		profiles = append(profiles, b)
	}
	if !bytes.Equal(profiles[0], profiles[1]) {
		t.Error("two runs wrote different profiles")
	}
	var res struct {
		Hosts []struct {
			Name string
			CPU  struct {
				Cycles     int64 `json:"cycles"`
				IdleCycles int64 `json:"idle_cycles"`
			}
		}
	}
	if err := json.Unmarshal(readDir(t, plainDir)["result.json"], &res); err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(profiles[0])
	if err != nil {
		t.Fatal(err)
	}
	byHost := map[string]int64{}
	for _, s := range p.Sample {
		byHost[s.Label["host"][0]] += s.Value[0]
	}
	var busy int64
	for _, h := range res.Hosts {
		b := h.CPU.Cycles - h.CPU.IdleCycles
		busy += b
		if byHost[h.Name] != b {
			t.Errorf("%s: the profile holds %d cycles; result.json says %d busy", h.Name, byHost[h.Name], b)
		}
	}
	if len(byHost) != len(res.Hosts) || len(res.Hosts) != 2 {
		t.Errorf("the profile has hosts %v; result.json %d", byHost, len(res.Hosts))
	}

	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command: go tool pprof not tried")
	}
	file := filepath.Join(t.TempDir(), "cycles.pb.gz")
	if err := os.WriteFile(file, profiles[0], 0o644); err != nil {
		t.Fatal(err)
	}
	top, err := exec.Command(gobin, "tool", "pprof", "-top", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, top)
	}
	m := regexp.MustCompile(`Total samples = (\d+)`).FindSubmatch(top)
	if m == nil {
		t.Fatalf("go tool pprof -top says no total:\n%s", top)
	}
	if total, _ := strconv.ParseInt(string(m[1]), 10, 64); total != busy {
		t.Errorf("go tool pprof -top totals %d cycles; the hosts were busy %d", total, busy)
	}
	for _, want := range []string{"File: udp-ne2000", "ne_block_input", "sys_sendto", "[irq 3]"} {
		if !bytes.Contains(top, []byte(want)) {
			t.Errorf("go tool pprof -top does not say %q:\n%s", want, top)
		}
	}
	tags, err := exec.Command(gobin, "tool", "pprof", "-tags", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -tags: %v\n%s", err, tags)
	}
	for _, h := range res.Hosts {
		b := h.CPU.Cycles - h.CPU.IdleCycles
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^\s*%d \(.*\): %s$`, b, regexp.QuoteMeta(h.Name))).Match(tags) {
			t.Errorf("go tool pprof -tags does not give %s its %d cycles:\n%s", h.Name, b, tags)
		}
	}
}
