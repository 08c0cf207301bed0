package report_test

import (
	"bytes"
	"strings"
	"testing"

	"simkron/report"
)

// A functional-detail result says so in JSON, in the summary and in the
// HTML page, and a full-detail one says nothing of detail (its JSON as
// before the field).
func TestDetailShown(t *testing.T) {
	for _, detail := range []string{"", "functional"} {
		r := sample()
		r.Detail = detail
		js := string(writeJSON(t, r))
		var sum, page bytes.Buffer
		if err := report.WriteSummary(&sum, r); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteHTML(&page, r); err != nil {
			t.Fatal(err)
		}
		want := detail != ""
		for name, text := range map[string]string{"summary": sum.String(), "html": page.String()} {
			if got := strings.Contains(text, "detail: functional"); got != want {
				t.Errorf("detail %q: %s says \"detail: functional\": %v", detail, name, got)
			}
		}
		if got := strings.Contains(js, "\"seed\": 3,\n  \"detail\": \"functional\","); got != want {
			t.Errorf("detail %q: JSON records it: %v\n%s", detail, got, js)
		}
		if !want && strings.Contains(js, `"detail"`) {
			t.Errorf("full detail: JSON has a detail field")
		}
		if want && strings.Contains(sum.String(), "line reads") {
			t.Errorf("functional detail: summary presents memory line counts:\n%s", sum.String())
		}
		var back report.Result
		if err := back.UnmarshalJSON([]byte(js)); err != nil || back.Detail != detail {
			t.Errorf("detail %q read back as %q: %v", detail, back.Detail, err)
		}
	}
}
