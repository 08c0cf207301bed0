//go:build !linux

package ethersim

import "fmt"

// TAP is a Linux TAP device; on other systems it cannot be opened.
type TAP struct{ Port }

// OpenTAP fails: TAP devices are Linux's.
func OpenTAP(name string) (*TAP, error) {
	if err := ValidTAPName(name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("TAP %s: bridges to real hosts use Linux TAP devices; this system has none", name)
}
