package server

import (
	"crypto/tls"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInvalidSSLPrincipalMappingRules is returned by New for
// Config.SSLPrincipalMappingRules that Kafka's SslPrincipalMapper refuses
// (or whose patterns Go's regexp cannot compile).
var ErrInvalidSSLPrincipalMappingRules = errors.New("server: invalid ssl.principal.mapping.rules")

// errNoMatchingRule is a certificate's name that no mapping rule maps:
// Kafka's SslPrincipalMapper.NoMatchingRule, which fails the connection.
var errNoMatchingRule = errors.New("no ssl.principal.mapping.rules rule applies")

// tlsPrincipal is the principal of a TLS connection without SASL, as
// Kafka's DefaultKafkaPrincipalBuilder builds it: "User:" and the client
// certificate's subject, printed as Java's X500Principal.getName() prints
// it and mapped by ssl.principal.mapping.rules; User:ANONYMOUS when the
// client sent no certificate. A certificate the handshake did not verify
// (tls.RequestClientCert, tls.RequireAnyClientCert without
// VerifyPeerCertificate or VerifyConnection) names no principal either:
// anyone can make one.
func (s *Server) tlsPrincipal(cs tls.ConnectionState, cfg *tls.Config) (string, error) {
	verified := len(cs.VerifiedChains) > 0 || cfg.VerifyPeerCertificate != nil || cfg.VerifyConnection != nil
	if len(cs.PeerCertificates) == 0 || !verified {
		return anonymous, nil
	}
	dn, err := x500Name(cs.PeerCertificates[0].RawSubject)
	if err != nil {
		return "", err
	}
	name, err := s.sslMapper.name(dn)
	if err != nil {
		return "", err
	}
	return "User:" + name, nil
}

// The attribute keywords Java's X500Principal.getName() (RFC 2253) prints;
// any other attribute is printed as its OID and its value's DER in hex.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// x500Name prints a DER Name (a certificate's RawSubject) as Java's
// X500Principal.getName() does (RFC 2253): the relative names last
// first, separated by ","; a name's attributes in their encoded order,
// joined by "+"; an attribute as its keyword, or its dotted OID, "=" and
// its value. A value whose type is a string Java reads (UTF8String,
// PrintableString, IA5String, TeletexString, BMPString, GeneralString) of
// a keyword attribute is printed as text, with `,=+<>#;"\` and its
// leading and trailing spaces and carriage returns escaped by a
// backslash, NUL as `\00`; any other value as "#" and its DER in
// lowercase hex.
func x500Name(der []byte) (string, error) {
	var rdns []asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &rdns); err != nil || len(rest) > 0 {
		return "", fmt.Errorf("server: the certificate's subject is not a DER Name: %v", err)
	}
	var sb strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if rdns[i].Class != asn1.ClassUniversal || rdns[i].Tag != asn1.TagSet {
			return "", errors.New("server: the certificate's subject holds a relative name that is not a SET")
		}
		if i < len(rdns)-1 {
			sb.WriteByte(',')
		}
		rest := rdns[i].Bytes
		for first := true; len(rest) > 0; first = false {
			var atv struct {
				Type  asn1.ObjectIdentifier
				Value asn1.RawValue
			}
			var err error
			if rest, err = asn1.Unmarshal(rest, &atv); err != nil {
				return "", fmt.Errorf("server: the certificate's subject holds a malformed attribute: %w", err)
			}
			if !first {
				sb.WriteByte('+')
			}
			writeAVA(&sb, atv.Type.String(), atv.Value)
		}
	}
	return sb.String(), nil
}

// The ASN.1 string types Java prints as text (besides those encoding/asn1
// names).
const (
	tagTeletexString = 20
	tagGeneralString = 27
	tagBMPString     = 30
)

func writeAVA(sb *strings.Builder, oid string, v asn1.RawValue) {
	kw, ok := rfc2253Keywords[oid]
	if !ok {
		kw = oid
	}
	sb.WriteString(kw)
	sb.WriteByte('=')
	text, isText := javaString(v)
	if !ok || !isText {
		sb.WriteByte('#')
		sb.WriteString(hex.EncodeToString(v.FullBytes))
		return
	}
	var esc []rune
	for _, r := range text {
		switch {
		case strings.ContainsRune(`,=+<>#;"\`, r):
			esc = append(esc, '\\', r)
		case r == 0:
			esc = append(esc, '\\', '0', '0')
		default:
			esc = append(esc, r)
		}
	}
	// Leading and trailing spaces and carriage returns, after the
	// escapes, each get a backslash too.
	blank := func(r rune) bool { return r == ' ' || r == '\r' }
	lead := 0
	for lead < len(esc) && blank(esc[lead]) {
		lead++
	}
	trail := len(esc) - 1
	for trail >= 0 && blank(esc[trail]) {
		trail--
	}
	for i, r := range esc {
		if i < lead || i > trail {
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
}

// javaString decodes a value of a string type X500Principal prints as
// text as Java does (JDK 25; JDK 17 decoded every type as UTF-8):
// UTF8String as UTF-8, BMPString as UTF-16BE, PrintableString, IA5String,
// TeletexString and GeneralString as ISO-8859-1, a malformed sequence as
// U+FFFD. False for other types.
func javaString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal || v.IsCompound {
		return "", false
	}
	b := v.Bytes
	switch v.Tag {
	case asn1.TagUTF8String:
		var sb strings.Builder
		for len(b) > 0 {
			r, n := utf8.DecodeRune(b)
			sb.WriteRune(r)
			b = b[n:]
		}
		return sb.String(), true
	case asn1.TagPrintableString, asn1.TagIA5String, tagTeletexString, tagGeneralString:
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), true
	case tagBMPString:
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		}
		s := string(utf16.Decode(u))
		if len(b)%2 != 0 {
			s += string(utf8.RuneError)
		}
		return s, true
	}
	return "", false
}

// sslPrincipalMapper is Kafka's SslPrincipalMapper: rules tried in order
// on a certificate's distinguished name, the first that applies naming
// the principal.
type sslPrincipalMapper struct {
	rules []sslRule
}

// sslRule is DEFAULT (the name as it is) or RULE:pattern/replacement/
// with an optional L or U after it (the result in lower or upper case).
type sslRule struct {
	isDefault   bool
	source      string         // the pattern as written
	whole       *regexp.Regexp // the pattern anchored at both ends
	re          *regexp.Regexp // the pattern
	emptyAfter  *regexp.Regexp // the pattern after any one character, anchored
	replacement string
	lower       bool
	upper       bool
}

// Kafka's grammar of ssl.principal.mapping.rules: a list of rules
// separated by commas and spaces, each DEFAULT, RULE:p/r/ with an optional
// L or U, or empty (ignored).
const sslRulePattern = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`

var (
	sslRuleSplitter = regexp.MustCompile(`\s*(` + sslRulePattern + `)\s*(,\s*|$)`)
	sslRuleParser   = regexp.MustCompile(`\A(?:` + sslRulePattern + `)`)
)

// parseSSLPrincipalMappingRules reads ssl.principal.mapping.rules as
// Kafka's SslPrincipalMapper does; empty means DEFAULT.
func parseSSLPrincipalMappingRules(rules string) (*sslPrincipalMapper, error) {
	if rules == "" {
		rules = "DEFAULT"
	}
	m := &sslPrincipalMapper{}
	for _, sm := range sslRuleSplitter.FindAllStringSubmatch(strings.TrimSpace(rules), -1) {
		rule := sm[1]
		g := sslRuleParser.FindStringSubmatchIndex(rule)
		if g[1] != len(rule) {
			return nil, fmt.Errorf("%w: `%s`, unmatched substring: `%s`", ErrInvalidSSLPrincipalMappingRules, rule, rule[g[1]:])
		}
		group := func(i int) (string, bool) {
			if g[2*i] < 0 {
				return "", false
			}
			return rule[g[2*i]:g[2*i+1]], true
		}
		if _, ok := group(1); ok {
			m.rules = append(m.rules, sslRule{isDefault: true})
			continue
		}
		pattern, ok := group(2)
		if !ok {
			continue // an empty rule
		}
		replacement, _ := group(4)
		lu, _ := group(6)
		r := sslRule{source: pattern, replacement: replacement, lower: lu == "L", upper: lu == "U"}
		var err error
		if r.re, err = regexp.Compile(pattern); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidSSLPrincipalMappingRules, rule, err)
		}
		if r.whole, err = regexp.Compile(`\A(?:` + pattern + `)\z`); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidSSLPrincipalMappingRules, rule, err)
		}
		if r.emptyAfter, err = regexp.Compile(`\A(?s:.)(?:` + pattern + `)`); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidSSLPrincipalMappingRules, rule, err)
		}
		m.rules = append(m.rules, r)
	}
	return m, nil
}

// name maps a distinguished name to a principal's name: the first rule
// that applies, errNoMatchingRule if none does.
func (m *sslPrincipalMapper) name(dn string) (string, error) {
	for _, r := range m.rules {
		name, ok, err := r.apply(dn)
		if err != nil {
			return "", err
		}
		if ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w: %s, rules %s", errNoMatchingRule, dn, m.rulesString())
}

// rulesString lists the rules as Kafka's SslPrincipalMapper prints them.
func (m *sslPrincipalMapper) rulesString() string {
	s := make([]string, len(m.rules))
	for i, r := range m.rules {
		switch {
		case r.isDefault:
			s[i] = "DEFAULT"
		case r.lower:
			s[i] = "RULE:" + r.source + "/" + r.replacement + "/L"
		case r.upper:
			s[i] = "RULE:" + r.source + "/" + r.replacement + "/U"
		default:
			s[i] = "RULE:" + r.source + "/" + r.replacement
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// apply is the rule's name for dn: Kafka's Rule.apply, which, when the
// pattern matches the whole name, replaces every match of the pattern in
// it (Java's String.replaceAll) by the replacement, whose references to
// groups the pattern does not have are taken literally.
func (r *sslRule) apply(dn string) (string, bool, error) {
	if r.isDefault {
		return dn, true, nil
	}
	if !r.whole.MatchString(dn) {
		return "", false, nil
	}
	groups := r.re.NumSubexp()
	repl := literalBackReferences(r.replacement, groups)
	var sb strings.Builder
	last := 0
	emit := func(m []int) error {
		sb.WriteString(dn[last:m[0]])
		if err := r.expand(&sb, repl, dn, m); err != nil {
			return err
		}
		last = m[1]
		return nil
	}
	for _, m := range r.re.FindAllStringSubmatchIndex(dn, -1) {
		if err := emit(m); err != nil {
			return "", false, err
		}
		if m[1] > m[0] {
			// Java's find, unlike Go's, also takes an empty match
			// right where a match ends.
			if e := r.emptyAt(dn, m[1]); e != nil {
				if err := emit(e); err != nil {
					return "", false, err
				}
			}
		}
	}
	sb.WriteString(dn[last:])
	out := sb.String()
	switch {
	case r.lower:
		out = strings.ToLower(out)
	case r.upper:
		out = strings.ToUpper(out)
	}
	return out, true, nil
}

// emptyAt is the pattern's match at byte offset at of s when the match it
// prefers there is empty, else nil.
func (r *sslRule) emptyAt(s string, at int) []int {
	var m []int
	if at == 0 {
		if m = r.re.FindStringSubmatchIndex(s); m == nil || m[0] != 0 {
			return nil
		}
	} else {
		_, w := utf8.DecodeLastRuneInString(s[:at])
		from := at - w
		if m = r.emptyAfter.FindStringSubmatchIndex(s[from:]); m == nil {
			return nil
		}
		m[0] = at - from // the match proper starts after the one character
		for i := range m {
			if m[i] >= 0 {
				m[i] += from
			}
		}
	}
	if m[1] != at {
		return nil
	}
	return m
}

// literalBackReferences escapes the references in a replacement to groups
// the pattern does not have ($n where n, its trailing digits dropped while
// it is 10 or more, is still above the groups), as Kafka's Rule does
// before it replaces: the backslash goes before the reference's "$" at its
// offset in the replacement as written, each insertion shifting the rest
// as Kafka's does.
func literalBackReferences(repl string, groups int) string {
	if groups == 0 {
		return repl
	}
	value := repl
	for _, m := range backReference.FindAllStringSubmatchIndex(repl, -1) {
		num := repl[m[2]:m[3]]
		if strings.HasPrefix(num, "0") {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			n = int(^uint(0) >> 1)
		}
		for n > groups && n >= 10 {
			n /= 10
		}
		if n > groups {
			at := m[2] - 1
			value = value[:at] + `\` + value[at:]
		}
	}
	return value
}

var backReference = regexp.MustCompile(`\$(\d+)`)

// expand writes repl for the match m of s as Java's
// Matcher.appendReplacement does: "\x" is x; "$n" the group n, taking as
// many digits as name a group; "${name}" the named group; a group that
// did not take part adds nothing.
func (r *sslRule) expand(sb *strings.Builder, repl, s string, m []int) error {
	groups := r.re.NumSubexp()
	group := func(n int) {
		if m[2*n] >= 0 {
			sb.WriteString(s[m[2*n]:m[2*n+1]])
		}
	}
	for i := 0; i < len(repl); i++ {
		switch c := repl[i]; c {
		case '\\':
			i++
			if i == len(repl) {
				return errors.New("character to be escaped is missing")
			}
			sb.WriteByte(repl[i])
		case '$':
			i++
			if i == len(repl) {
				return errors.New("Illegal group reference: group index is missing")
			}
			if repl[i] == '{' {
				end := strings.IndexByte(repl[i:], '}')
				if end < 0 {
					return errors.New("named capturing group is missing trailing '}'")
				}
				name := repl[i+1 : i+end]
				n := r.re.SubexpIndex(name)
				if n < 0 {
					return fmt.Errorf("No group with name {%s}", name)
				}
				group(n)
				i += end
				continue
			}
			if repl[i] < '0' || repl[i] > '9' {
				return errors.New("Illegal group reference")
			}
			n := int(repl[i] - '0')
			for i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' {
				next := n*10 + int(repl[i+1]-'0')
				if next > groups {
					break
				}
				n = next
				i++
			}
			if n > groups {
				return fmt.Errorf("No group %d", n)
			}
			group(n)
		default:
			sb.WriteByte(c)
		}
	}
	return nil
}
