package timeline

import (
	"strconv"
	"unicode/utf8"
)

// The Trace Event Format's JSON, written by hand so that the bytes are
// the same on every run and nothing is allocated per event: one object a
// line, in the order the events become final.

// Event phases (the format's "ph").
const (
	phComplete   = 'X'
	phInstant    = 'i'
	phCounter    = 'C'
	phAsyncBegin = 'b'
	phAsyncEnd   = 'e'
	phFlowStart  = 's'
	phFlowEnd    = 'f'
	phMetadata   = 'M'
)

// event is one trace event; ts and dur are picoseconds.
type event struct {
	ph       byte
	name     string
	cat      string
	pid, tid int
	ts, dur  int64
	id       uint64 // async and flow events
	scope    byte   // instants: 't' thread, 'p' process, 'g' global
	args     string // a JSON object's members, without the braces ("" none)
}

// appendEvent appends e as a JSON object.
func appendEvent(b []byte, e *event) []byte {
	b = append(b, `{"ph":"`...)
	b = append(b, e.ph)
	b = append(b, `","name":`...)
	b = appendString(b, e.name)
	if e.cat != "" {
		b = append(b, `,"cat":`...)
		b = appendString(b, e.cat)
	}
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(e.pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(e.tid), 10)
	if e.ph != phMetadata {
		b = append(b, `,"ts":`...)
		b = appendMicros(b, e.ts)
	}
	switch e.ph {
	case phComplete:
		b = append(b, `,"dur":`...)
		b = appendMicros(b, e.dur)
	case phInstant:
		b = append(b, `,"s":"`...)
		b = append(b, e.scope)
		b = append(b, '"')
	case phAsyncBegin, phAsyncEnd, phFlowStart:
		b = append(b, `,"id":`...)
		b = strconv.AppendUint(b, e.id, 10)
	case phFlowEnd:
		b = append(b, `,"id":`...)
		b = strconv.AppendUint(b, e.id, 10)
		b = append(b, `,"bp":"e"`...)
	}
	if e.args != "" {
		b = append(b, `,"args":{`...)
		b = append(b, e.args...)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendMicros appends ps picoseconds as microseconds, exactly: the
// format's unit, with as many decimals (up to six) as the value needs.
func appendMicros(b []byte, ps int64) []byte {
	if ps < 0 {
		b = append(b, '-')
		ps = -ps
	}
	b = strconv.AppendInt(b, ps/1e6, 10)
	frac := ps % 1e6
	if frac == 0 {
		return b
	}
	var d [7]byte
	d[0] = '.'
	for i := 6; i >= 1; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 7
	for d[n-1] == '0' {
		n--
	}
	return append(b, d[:n]...)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// members builds the members of an args object.
type members []byte

func (m members) sep() members {
	if len(m) > 0 {
		m = append(m, ',')
	}
	return m
}

func (m members) str(key, v string) members {
	m = appendString(m.sep(), key)
	m = append(m, ':')
	return appendString(m, v)
}

func (m members) int(key string, v int64) members {
	m = appendString(m.sep(), key)
	m = append(m, ':')
	return strconv.AppendInt(m, v, 10)
}

func (m members) float(key string, v float64) members {
	m = appendString(m.sep(), key)
	m = append(m, ':')
	return strconv.AppendFloat(m, v, 'g', -1, 64)
}

func (m members) raw(key string, v []byte) members {
	m = appendString(m.sep(), key)
	m = append(m, ':')
	return append(m, v...)
}
