package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

// errMalformedUnicode is a \u escape without four hexadecimal digits,
// which java.util.Properties refuses ("Malformed \uxxxx encoding.").
var errMalformedUnicode = errors.New(`malformed \uxxxx encoding`)

// parseProperties reads a properties file as Kafka reads its broker
// properties (java.util.Properties.load of the file's bytes): bytes are
// ISO 8859-1 characters (non-ASCII text is written as \uXXXX escapes); a
// line whose first non-blank character is # or ! is a comment; a line
// ending in an odd number of backslashes goes on in the next, whose
// leading blanks are dropped; the key ends at the first unescaped '=',
// ':' or blank, then blanks, one '=' or ':' and blanks more are skipped,
// and the rest of the line is the value, trailing blanks included.
// Escapes: \t \n \r \f, \uXXXX, and a backslash before any other
// character is that character. A key given twice keeps its last value.
// keys lists the keys in the order they first appear.
func parseProperties(b []byte) (props map[string]string, keys []string, err error) {
	// ISO 8859-1: each byte is the code point of its value.
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	props = map[string]string{}
	for lineNo, line := range logicalLines(rs) {
		key, value, err := splitProperty(line)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if _, ok := props[key]; !ok {
			keys = append(keys, key)
		}
		props[key] = value
	}
	return props, keys, nil
}

// isBlank is Properties' white space: space, tab and form feed.
func isBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\f' }

// logicalLines yields the logical lines of rs (continuations joined,
// comments and blank lines left out, escapes still in place), each with
// the number of the natural line it starts on.
func logicalLines(rs []rune) func(yield func(int, []rune) bool) {
	return func(yield func(int, []rune) bool) {
		natural := 1
		for i := 0; i < len(rs); {
			// Skip the blanks starting a line, and empty lines.
			for i < len(rs) && (isBlank(rs[i]) || rs[i] == '\n' || rs[i] == '\r') {
				if rs[i] == '\n' || (rs[i] == '\r' && (i+1 == len(rs) || rs[i+1] != '\n')) {
					natural++
				}
				i++
			}
			if i == len(rs) {
				return
			}
			start := natural
			if rs[i] == '#' || rs[i] == '!' {
				// A comment runs to the end of its natural line; a
				// backslash there continues nothing.
				for i < len(rs) && rs[i] != '\n' && rs[i] != '\r' {
					i++
				}
				continue
			}
			var line []rune
			for i < len(rs) {
				j := i
				for j < len(rs) && rs[j] != '\n' && rs[j] != '\r' {
					j++
				}
				line = append(line, rs[i:j]...)
				backslashes := 0
				for k := len(line) - 1; k >= 0 && line[k] == '\\'; k-- {
					backslashes++
				}
				// Past the terminator (\r\n is one).
				if j < len(rs) {
					if rs[j] == '\r' && j+1 < len(rs) && rs[j+1] == '\n' {
						j++
					}
					j++
					natural++
				}
				i = j
				if backslashes%2 == 0 {
					break
				}
				line = line[:len(line)-1] // the continuing backslash; at the end of the file, dropped
				for i < len(rs) && isBlank(rs[i]) {
					i++
				}
			}
			if !yield(start, line) {
				return
			}
		}
	}
}

// splitProperty splits a logical line into its key and value, escapes
// resolved.
func splitProperty(line []rune) (string, string, error) {
	keyEnd, valueStart, sep, escaped := len(line), len(line), false, false
	for i, r := range line {
		if !escaped && (r == '=' || r == ':') {
			keyEnd, valueStart, sep = i, i+1, true
			break
		}
		if !escaped && isBlank(r) {
			keyEnd, valueStart = i, i+1
			break
		}
		escaped = r == '\\' && !escaped
	}
	for valueStart < len(line) {
		r := line[valueStart]
		if !isBlank(r) {
			if sep || (r != '=' && r != ':') {
				break
			}
			sep = true
		}
		valueStart++
	}
	key, err := unescape(line[:keyEnd])
	if err != nil {
		return "", "", err
	}
	value, err := unescape(line[valueStart:])
	return key, value, err
}

// unescape resolves Properties' escapes.
func unescape(rs []rune) (string, error) {
	var sb strings.Builder
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r != '\\' || i+1 == len(rs) {
			sb.WriteRune(r)
			continue
		}
		i++
		switch r = rs[i]; r {
		case 't':
			r = '\t'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 'f':
			r = '\f'
		case 'u':
			n, err := hex4(rs[i+1:])
			if err != nil {
				return "", err
			}
			r, i = rune(n), i+4
			// A UTF-16 surrogate pair, as Java's strings hold characters
			// past U+FFFF, is one character.
			if utf16.IsSurrogate(r) && i+6 < len(rs) && rs[i+1] == '\\' && rs[i+2] == 'u' {
				if lo, err := hex4(rs[i+3:]); err == nil {
					if pair := utf16.DecodeRune(r, rune(lo)); pair != unicode.ReplacementChar {
						r, i = pair, i+6
					}
				}
			}
		}
		sb.WriteRune(r)
	}
	return sb.String(), nil
}

// hex4 is the number the first four runes of rs write in hexadecimal.
func hex4(rs []rune) (uint64, error) {
	if len(rs) < 4 {
		return 0, errMalformedUnicode
	}
	n, err := strconv.ParseUint(string(rs[:4]), 16, 16)
	if err != nil {
		return 0, errMalformedUnicode
	}
	return n, nil
}
