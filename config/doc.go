// Package config is the configuration layer of simkron: strict decoding of
// TOML files into the typed Params structs of components, with errors that
// name file, line and key.
//
// # Layer
//
// config sits beside the event scheduler: it imports only package sim (for the
// unit types), the standard library and github.com/BurntSushi/toml. It knows
// nothing of any component; components declare their Params structs and the
// machine builder calls [File.DecodeInto] for each table.
//
// # Contract
//
// A Params struct is filled with its defaults by a constructor before
// decoding; the decoder overwrites only what the file sets. Each exported
// field carries its TOML key and documentation in struct tags:
//
//	type Params struct {
//		Clock sim.Frequency    `toml:"clock" help:"CPU clock rate" min:"1MHz" max:"1GHz"`
//		Ways  int              `toml:"ways" help:"associativity" min:"1" max:"64" unit:"ways"`
//		Cache CacheParams      `toml:"cache"` // a nested table
//		Slots []SlotParams     `toml:"slot"`  // an array of tables
//		Costs map[string]int64 `toml:"costs" help:"per-operation overrides"`
//	}
//
// The tags and methods mean:
//
//   - toml names the key; it is required on every exported field except
//     embedded structs, whose fields are inlined; toml:"-" skips a field.
//   - help and unit document the field for [Describe].
//   - min and max bound numeric fields, written in the field's own syntax
//     ("1", "0.5", "1MHz", "4KiB"): types with UnmarshalText parse their
//     bounds with it. On a slice, array or map they bound every element.
//   - nonempty:"true" on a slice, array, map or string asks for at least
//     one element where the file gives the value: a list the component
//     takes the largest of, or runs once per element, is refused empty at
//     load rather than found empty at run time. (An empty default is the
//     component's to report, when it is used.)
//   - A type may have a Validate() error method for checks across fields.
//     It runs after decoding and the bound checks, innermost structs first,
//     and only when nothing inside that struct failed already. It may return
//     a [*FieldError] or [FieldErrors] whose keys are relative to the struct;
//     the decoder prefixes the struct's key path and finds the line.
//   - Slice elements start from the zero value; an element type whose
//     pointer has a SetDefaults() method gets it called first.
//
// A float must be finite: nan and inf are refused for every float field
// (no parameter gives them a meaning, and nan passes every min and max).
//
// Decoding never stops at the first problem: unknown keys (with a
// suggestion when one is close), type and unit errors, bounds and Validate
// errors are all collected into one [Errors], sorted by line. Only a syntax
// error stops parsing.
//
// # Key paths
//
// A key path is a list of key names from the root of the file. An element of
// an array of tables (or of an inline array) is addressed by its 0-based
// index written in decimal, so the second [[host]] table's machine key is
// ("host", "1", "machine"). In messages such a path is written
// host[1].machine.
//
// # Limits
//
// [Parse] reads only a regular file of at most 4 MiB (package
// internal/infile): a FIFO, a device or a larger file is refused before a
// byte is read. A key path deeper than [MaxDepth] (64) is refused at its
// line before the TOML library parses the text, whose parse time grows
// with the square of a table header's depth.
//
// # Simplifications
//
//   - Line numbers come from a small scanner of the (already validated) TOML
//     text; a key is located at the line where its name starts, a table at
//     its header, an element of an inline array at the line of its value.
//   - Arrays in the file replace a default slice entirely; maps are merged
//     key by key into a copy of the default map.
package config
