package testtool

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TsharkFields dissects capture with IP and TCP checksum validation (and
// the preferences given, as tshark's -o takes them) and returns, for
// every frame in order, the fields asked for by name, several
// occurrences joined by ","; each row also holds frame.number. Without
// tshark the test is skipped (failed under CI).
func TsharkFields(t *testing.T, capture []byte, prefs []string, fields ...string) []map[string]string {
	t.Helper()
	bin := Need(t, "tshark")
	f := filepath.Join(t.TempDir(), fmt.Sprintf("cap%d.pcap", len(capture)))
	if err := os.WriteFile(f, capture, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-n", "-r", f, "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"}
	for _, p := range prefs {
		args = append(args, "-o", p)
	}
	fields = append([]string{"frame.number"}, fields...)
	args = append(args, "-T", "fields")
	for _, x := range fields {
		args = append(args, "-e", x)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var frames []map[string]string
	for line := range strings.SplitSeq(strings.TrimRight(string(out), "\n"), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) != len(fields) || cols[0] != fmt.Sprint(len(frames)+1) {
			t.Fatalf("tshark: line %q does not hold the fields of frame %d", line, len(frames)+1)
		}
		row := map[string]string{}
		for i, c := range cols {
			row[fields[i]] = c
		}
		frames = append(frames, row)
	}
	return frames
}

// Expert severities as tshark prints them (epan/proto.h PI_WARN, PI_ERROR).
const (
	ExpertWarn  = 0x600000
	ExpertError = 0x800000
)

// Severity returns the highest expert severity of a row of TsharkFields
// that asked for _ws.expert.severity, 0 if none.
func Severity(row map[string]string) int {
	worst := 0
	for v := range strings.SplitSeq(row["_ws.expert.severity"], ",") {
		var s int
		fmt.Sscan(v, &s)
		worst = max(worst, s)
	}
	return worst
}

// Malformed reports whether tshark found the frame of a row of
// TsharkFields that asked for frame.protocols malformed.
func Malformed(row map[string]string) bool {
	return slices.Contains(strings.Split(row["frame.protocols"], ":"), "_ws.malformed")
}
