package ethersim

import "fmt"

// MaxTAPName is the longest name of a network interface on Linux:
// IFNAMSIZ (16) less the terminating NUL.
const MaxTAPName = 15

// ValidTAPName checks a TAP device's name: 1 to 15 bytes of letters,
// digits, '.', '-' and '_', and not "." or "..". Linux itself refuses
// '/', ':' and white space and makes a number of "%d"; the rest keeps
// the name safe in messages and file names.
func ValidTAPName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the TAP device's name is empty")
	case len(name) > MaxTAPName:
		return fmt.Errorf("TAP name %q is %d bytes long; a Linux interface name has at most %d (IFNAMSIZ 16, less the NUL)", name, len(name), MaxTAPName)
	case name == "." || name == "..":
		return fmt.Errorf("TAP name %q is not an interface name", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return fmt.Errorf("TAP name %q may hold only letters, digits, '.', '-' and '_'", name)
		}
	}
	return nil
}
