package main

import (
	"os"
	"testing"

	"simkron/report"
)

func readResult(t *testing.T, path string) *report.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := report.ReadJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}
