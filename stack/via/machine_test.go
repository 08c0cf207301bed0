package via_test

import (
	"testing"

	"simkron/internal/simostest"
)

type machineFile = simostest.MachineFile

func loadMachine(t testing.TB) machineFile {
	return simostest.Load(t, "../../configs/machines/simos-mipsy.toml")
}
