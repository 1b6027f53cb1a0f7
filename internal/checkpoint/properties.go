package checkpoint

import (
	"slices"
	"time"
	"unicode/utf16"
)

// Java's properties format, as java.util.Properties.load(InputStream) reads
// it and Properties.store writes it; meta.properties is the only file of
// this package that uses it.
//
// Reading (Properties.load and its LineReader):
//
//   - The file is ISO-8859-1: every byte is one character. Kafka loads
//     meta.properties from an InputStream, so this is what Kafka sees;
//     non-ASCII characters are only portable as \uXXXX escapes.
//   - Natural lines end at "\n", "\r" or "\r\n". Whitespace (' ', '\t',
//     '\f') at the start of a line is skipped; blank lines are skipped; a
//     line whose first other character is '#' or '!' is a comment.
//   - A line ending in an odd number of backslashes continues on the next
//     line: the backslash and the next line's leading whitespace are
//     dropped. A backslash at the very end of the file is dropped. (The
//     corners are the JDK's; see propertyLines.)
//   - The key ends at the first unescaped '=', ':' or whitespace; then
//     whitespace, at most one '=' or ':' (if whitespace ended the key) and
//     whitespace again are skipped; the rest of the line is the value,
//     trailing whitespace included.
//   - In keys and values, \t \n \r \f are those characters, \uXXXX is a
//     UTF-16 code unit (four hex digits, else the file is malformed), and a
//     backslash before any other character is dropped.
//   - A key given twice keeps its last value.
//
// Writing (Properties.store with an empty comment):
//
//	#\n
//	#<Date.toString(): "EEE MMM dd HH:mm:ss zzz yyyy">\n
//	<key>=<value>\n      × every property, sorted by key
//
// Keys and values escape '\\' and '=' ':' '#' '!' with a backslash, tab,
// newline, carriage return and form feed as \t \n \r \f, and characters
// below 0x20 or above 0x7E as \uXXXX (upper-case hex, UTF-16); spaces are
// escaped in keys, and in values only when first. This is what
// Properties.store(OutputStream) writes. Kafka calls store(Writer), which
// writes characters above 0x7E unescaped in UTF-8 that its own reader then
// misreads as ISO-8859-1; for ASCII values the two are the same bytes. JDK
// 18 and later sort the keys as here; JDK 17 writes them in hash order.

// javaDateLayout is java.util.Date.toString's format in Go's notation.
const javaDateLayout = "Mon Jan 02 15:04:05 MST 2006"

// parseProperties reads data in the properties format into a map.
func parseProperties(file string, data []byte) (map[string]string, error) {
	props := make(map[string]string)
	err := propertyLines(data, func(line []byte, start int) error {
		keyEnd, valueStart := splitProperty(line)
		key, ok := unescapeProperty(line[:keyEnd])
		if !ok {
			return corruptf(file, lineNumber(data, start), "malformed \\uxxxx escape in key")
		}
		value, ok := unescapeProperty(line[valueStart:])
		if !ok {
			return corruptf(file, lineNumber(data, start), "malformed \\uxxxx escape in value")
		}
		props[key] = value
		return nil
	})
	if err != nil {
		return nil, err
	}
	return props, nil
}

func isPropertySpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// propertyLines calls fn with every logical line of data (continuations
// joined, comments and blank lines skipped) and the offset in data where it
// starts. It follows the JDK's LineReader (JDK 9 and later) to the letter,
// including its corners: a line that a continuation leaves empty ends
// there, and what follows is a new logical line (a comment if it starts
// with '#' or '!'); but a continuation backslash right before the end of
// the file (or before a final line terminator) still yields a line, empty
// if nothing preceded it, which loads as the key "" with the value "".
func propertyLines(data []byte, fn func(line []byte, start int) error) error {
	var (
		buf       []byte
		start     int    // offset of the logical line's first character
		skipSpace = true // skipping whitespace before a line or after a continuation
		appended  bool   // just after a continuation: a terminator is not skipped
		backslash bool   // buf ends in an odd number of backslashes
	)
	pos := 0
	for {
		if pos >= len(data) {
			if len(buf) == 0 {
				return nil
			}
			if backslash {
				buf = buf[:len(buf)-1]
			}
			return fn(buf, start)
		}
		c := data[pos]
		pos++
		if skipSpace {
			if isPropertySpace(c) || !appended && (c == '\n' || c == '\r') {
				continue
			}
			skipSpace, appended = false, false
		}
		if len(buf) == 0 && (c == '#' || c == '!') {
			for pos < len(data) && data[pos] != '\n' && data[pos] != '\r' {
				pos++
			}
			pos++ // the terminator; a "\n" after a "\r" is skipped as a blank line
			skipSpace = true
			continue
		}
		if c != '\n' && c != '\r' {
			if len(buf) == 0 {
				start = pos - 1
			}
			buf = append(buf, c)
			backslash = c == '\\' && !backslash
			continue
		}
		// A line terminator.
		if len(buf) == 0 {
			skipSpace = true
			continue
		}
		if pos >= len(data) || !backslash {
			if backslash {
				buf = buf[:len(buf)-1]
			}
			if err := fn(buf, start); err != nil {
				return err
			}
			buf, skipSpace, backslash = buf[:0], true, false
			continue
		}
		// A continuation: drop the backslash and the next line's leading
		// whitespace.
		buf = buf[:len(buf)-1]
		skipSpace, appended, backslash = true, true, false
		if c == '\r' && data[pos] == '\n' {
			pos++
		}
	}
}

// lineNumber returns the 1-based number of the line holding offset off.
func lineNumber(data []byte, off int) int {
	n := 1
	for i := 0; i < off && i < len(data); i++ {
		if data[i] == '\n' || data[i] == '\r' && (i+1 >= len(data) || data[i+1] != '\n') {
			n++
		}
	}
	return n
}

// splitProperty returns where a logical line's key ends and its value
// starts.
func splitProperty(line []byte) (keyEnd, valueStart int) {
	valueStart = len(line)
	hasSep, backslash := false, false
	for keyEnd < len(line) {
		c := line[keyEnd]
		if !backslash {
			if c == '=' || c == ':' {
				valueStart, hasSep = keyEnd+1, true
				break
			}
			if isPropertySpace(c) {
				valueStart = keyEnd + 1
				break
			}
		}
		backslash = c == '\\' && !backslash
		keyEnd++
	}
	for valueStart < len(line) {
		c := line[valueStart]
		if !isPropertySpace(c) {
			if hasSep || (c != '=' && c != ':') {
				break
			}
			hasSep = true
		}
		valueStart++
	}
	return keyEnd, valueStart
}

// unescapeProperty decodes a key or value: bytes are ISO-8859-1
// characters; escapes are Java's. It returns false for a malformed \uXXXX.
func unescapeProperty(b []byte) (string, bool) {
	units := make([]uint16, 0, len(b))
	ascii := true
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			units = append(units, uint16(c))
			ascii = ascii && c < 0x80
			continue
		}
		i++
		if i >= len(b) {
			break // a lone final backslash (not reachable from a logical line)
		}
		switch c = b[i]; c {
		case 'u':
			if i+5 > len(b) {
				return "", false
			}
			v := uint16(0)
			for _, h := range b[i+1 : i+5] {
				d, ok := hexDigit(h)
				if !ok {
					return "", false
				}
				v = v<<4 | uint16(d)
			}
			units = append(units, v)
			ascii = ascii && v < 0x80
			i += 4
			continue
		case 't':
			c = '\t'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 'f':
			c = '\f'
		}
		units = append(units, uint16(c))
		ascii = ascii && c < 0x80
	}
	if ascii {
		buf := make([]byte, len(units))
		for i, u := range units {
			buf[i] = byte(u)
		}
		return string(buf), true
	}
	return string(utf16.Decode(units)), true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// appendProperties appends props in the properties format with the header
// Properties.store writes for an empty comment, dated now, keys sorted.
// The strings must be valid UTF-8 (invalid bytes would be written as
// U+FFFD).
func appendProperties(dst []byte, props map[string]string, now time.Time) []byte {
	dst = append(dst, "#\n#"...)
	dst = now.AppendFormat(dst, javaDateLayout)
	dst = append(dst, '\n')
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		dst = escapeProperty(dst, k, true)
		dst = append(dst, '=')
		dst = escapeProperty(dst, props[k], false)
		dst = append(dst, '\n')
	}
	return dst
}

// escapeProperty appends s escaped as Properties.store(OutputStream) does;
// escapeSpace escapes every space (keys), otherwise only a first one.
func escapeProperty(dst []byte, s string, escapeSpace bool) []byte {
	const hex = "0123456789ABCDEF"
	for x, u := range utf16.Encode([]rune(s)) {
		switch {
		case u == '\\':
			dst = append(dst, '\\', '\\')
		case u > 61 && u < 127:
			dst = append(dst, byte(u))
		case u == ' ':
			if x == 0 || escapeSpace {
				dst = append(dst, '\\')
			}
			dst = append(dst, ' ')
		case u == '\t':
			dst = append(dst, '\\', 't')
		case u == '\n':
			dst = append(dst, '\\', 'n')
		case u == '\r':
			dst = append(dst, '\\', 'r')
		case u == '\f':
			dst = append(dst, '\\', 'f')
		case u == '=' || u == ':' || u == '#' || u == '!':
			dst = append(dst, '\\', byte(u))
		case u < 0x20 || u > 0x7e:
			dst = append(dst, '\\', 'u', hex[u>>12], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
		default:
			dst = append(dst, byte(u))
		}
	}
	return dst
}
