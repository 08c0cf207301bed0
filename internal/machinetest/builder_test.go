package machinetest_test

import (
	"strings"
	"testing"

	"simkron/internal/machinetest"
)

// fatal records a test's failure instead of stopping it.
type fatal struct {
	testing.TB
	failed string
}

func (f *fatal) Helper()                           {}
func (f *fatal) Fatalf(format string, args ...any) { f.failed = format; panic(f) }
func (f *fatal) Fatal(args ...any)                 { f.failed = "fatal"; panic(f) }

// fails reports whether fn failed the test it was given.
func fails(fn func(t testing.TB)) (failed bool) {
	f := &fatal{}
	defer func() {
		if r := recover(); r != nil {
			failed = r == f
		}
	}()
	fn(f)
	return false
}

func TestBuilderEditsByKey(t *testing.T) {
	b := machinetest.Edit(t, "../../configs/udp-ne2000.toml").
		Set("workload.udp.sizes", []any{4, 1024}).
		Set("segment[0].pcap", false).
		Set("host[1].inet.mtu", 576).
		Delete("experiment.description").
		Append("host[0].nic", map[string]any{"device": "nic1", "segment": "lan0", "mac": "02:00:00:00:00:99"})
	text := b.Text()
	for _, want := range []string{"sizes = [4, 1024]", "mtu = 576", `device = "nic1"`} {
		if !strings.Contains(text, want) {
			t.Errorf("edited config lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "description") {
		t.Error("the deleted key is still there")
	}
	// The edited experiment still names its machine files relative to
	// the shipped config, and loads.
	exp := machinetest.Edit(t, "../../configs/udp-ne2000.toml").Set("workload.udp.messages", 3).Experiment()
	if exp.Hosts[0].Machine == nil {
		t.Fatal("the edited experiment's machine was not read")
	}
}

// An edit that names nothing fails the test: a config that changed shape
// never leaves an edit silently undone.
func TestBuilderRefusesMissingKeys(t *testing.T) {
	for _, edit := range []func(b *machinetest.Builder){
		func(b *machinetest.Builder) { b.Delete("workload.udp.no_such_key") },
		func(b *machinetest.Builder) { b.Set("host[7].inet.mtu", 576) },
		func(b *machinetest.Builder) { b.Set("segment[0]", 1) },
		func(b *machinetest.Builder) { b.Set("experiment.name.x", 1) },
	} {
		if !fails(func(t testing.TB) { edit(machinetest.Edit(t, "../../configs/udp-ne2000.toml")) }) {
			t.Error("an edit of a key the config does not have passed")
		}
	}
}
