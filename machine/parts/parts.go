// Package parts links in every part a simulated host and its network can
// be assembled from (package machine/part): the network technologies,
// the host environments, their device models and drivers, and the
// protocol families. Package machine imports it; a new part adds its
// line here.
package parts

import (
	// Network technologies and their cards.
	_ "simkron/machine/parts/atm"
	_ "simkron/machine/parts/ethernet"

	// Host environments and their devices.
	_ "simkron/machine/parts/kernelhost"
	_ "simkron/machine/parts/tophost"

	// Protocol families.
	_ "simkron/machine/parts/inetfamily"
	_ "simkron/machine/parts/isofamily"
	_ "simkron/machine/parts/viafamily"
)
