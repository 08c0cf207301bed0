package config

import (
	"fmt"
	"strings"
)

// Error is one problem in a configuration file.
//
// Its text is "file:line: key: message"; a zero Line, an empty File or an
// empty Key is left out.
type Error struct {
	File string // path of the file, as given to Parse
	Line int    // 1-based line, 0 when unknown
	Key  string // key path as written in messages, e.g. "host[1].cpu.clock"
	Msg  string
	Err  error // underlying cause (an I/O error), or nil
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if e.File == "" {
			b.WriteString("line ")
		} else {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%d", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem found in one load, in file order. Functions of
// this package return either nil or a non-empty Errors.
type Errors []*Error

// Error joins the problems, one per line.
func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// FieldError is a problem found by a Validate method. Key is relative to the
// struct whose Validate returned it: a dotted path of its keys ("line",
// "cache.ways"; array elements as "slot.2.irq"), or empty for the struct
// itself.
type FieldError struct {
	Key string
	Msg string
}

func (e *FieldError) Error() string {
	if e.Key == "" {
		return e.Msg
	}
	return e.Key + ": " + e.Msg
}

// FieldErrors is several problems found by one Validate method.
type FieldErrors []*FieldError

func (es FieldErrors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Fieldf is a shorthand for a *FieldError with a formatted message.
func Fieldf(key, format string, args ...any) *FieldError {
	return &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)}
}
