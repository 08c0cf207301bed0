//go:build linux

package report_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"simkron/internal/testtool"
	"simkron/report"
)

// chromium runs headless Chromium on args and returns its standard output
// and error. It runs in a process group of its own, killed whole when the
// time is up or it has exited, so that no renderer outlives the test.
func chromium(t *testing.T, bin string, args ...string) (stdout, stderr string) {
	t.Helper()
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
	}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+profile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Start()
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	// Whatever of the group is left (the group's id is the leader's pid,
	// which the kernel does not reuse while any member lives).
	if kerr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
		t.Logf("killing chromium's process group: %v", kerr)
	}
	if ctx.Err() != nil {
		t.Fatalf("chromium did not finish in time:\n%s", errb.String())
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

// consoleErrors returns the lines of Chromium's log that report a script
// error or a console message from the page; the page has no script, so
// any is a fault (a blocked resource, a parse error).
func consoleErrors(log string) []string {
	var bad []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, ":CONSOLE") ||
			strings.Contains(line, "Failed to load resource") || strings.Contains(line, "Not allowed to load") {
			bad = append(bad, line)
		}
	}
	return bad
}

// screenshotPixels takes a screenshot of url in a window of size ("W,H")
// into dir, fails the test on a browser error, and counts the pixels
// whose colour (16-bit red, green, blue) pick accepts.
func screenshotPixels(t *testing.T, bin, dir, size, url string, pick func(r, g, b uint32) bool) (image.Rectangle, int) {
	t.Helper()
	shot := filepath.Join(dir, "shot.png")
	_, log := chromium(t, bin, "--screenshot="+shot, "--window-size="+size, url)
	if bad := consoleErrors(log); len(bad) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(bad, "\n"))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if pick(r, g, b) {
				n++
			}
		}
	}
	return bounds, n
}

// The HTML report opens in a real browser without errors and shows its
// charts. Skipped where there is no chromium on the PATH (a failure under
// CI=true).
func TestHTMLInChromium(t *testing.T) {
	bin := testtool.Need(t, "chromium")
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := report.WriteHTML(&b, sweep()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page

	dom, log := chromium(t, bin, "--dump-dom", url)
	// The layers and latency charts: a sweep has no ttcp progress.
	if n := strings.Count(dom, "<svg"); n != 2 {
		t.Errorf("the DOM has %d <svg> elements, want 2:\n%.2000s", n, dom)
	}
	for _, want := range []string{`<figure id="chart-layers"`, `<figure id="chart-latency"`, "<th>APPL</th>",
		"UDP send</text>", `<section id="layers">`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	if bad := consoleErrors(log); len(bad) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(bad, "\n"))
	}

	// The charts' bars are the only colour on the page but the status.
	bounds, colored := screenshotPixels(t, bin, dir, "1200,2000", url, func(r, g, bl uint32) bool {
		return max(r, g, bl)-min(r, g, bl) > 0x2000
	})
	if colored < 5000 {
		t.Errorf("the screenshot (%v) has %d coloured pixels: no charts drawn?", bounds, colored)
	}
	t.Logf("screenshot %v, %d coloured pixels", bounds, colored)
}

// The report's waterfall opens in a real browser without errors: its
// section, its rows of bars and their colours on the screenshot.
func TestWaterfallInChromium(t *testing.T) {
	bin := testtool.Need(t, "chromium")
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := report.Write(&b, sample(), report.Options{Format: report.FormatHTML, Waterfall: waterfall()}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page
	dom, log := chromium(t, bin, "--dump-dom", url)
	for _, want := range []string{`<section id="waterfall">`, `<figure id="chart-waterfall"`, ">mipsB → mipsA</text>", ">receive 5,877 cycles</text>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	if bad := consoleErrors(log); len(bad) > 0 {
		t.Errorf("browser errors:\n%s", strings.Join(bad, "\n"))
	}
	// The waterfall alone, as its SVG: its bars are the colour on it.
	var svg bytes.Buffer
	if err := report.WriteWaterfallSVG(&svg, waterfall(), 1100); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "waterfall.svg")
	if err := os.WriteFile(file, svg.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// UDP's orange in the first row, where the receive ends.
	bounds, orange := screenshotPixels(t, bin, dir, "1100,300", "file://"+file, func(r, g, bl uint32) bool {
		return r>>8 > 0xd0 && g>>8 > 0x90 && g>>8 < 0xb0 && bl>>8 < 0x20
	})
	if orange < 1000 {
		t.Errorf("the screenshot (%v) has %d orange (UDP) pixels: no bars drawn?", bounds, orange)
	}
	t.Logf("screenshot %v, %d UDP pixels", bounds, orange)
}
