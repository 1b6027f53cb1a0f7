package server

import (
	"bytes"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSSLPrincipalMappingRulesParse: the rules Kafka's SslPrincipalMapper
// accepts and refuses (its documentation's and its tests' examples), and
// how it splits a list, seen through the list it prints.
func TestSSLPrincipalMappingRulesParse(t *testing.T) {
	for _, rules := range []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
		"RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
		"RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
		"RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
	} {
		_, err := parseSSLPrincipalMappingRules(rules)
		require.NoError(t, err, rules)
	}
	for _, rules := range []string{
		"default",
		"DEFAUL",
		"DEFAULT/L",
		"DEFAULT/U",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1",
		"rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
		"DEFAULT, RULE:^CN=(.*/$1/", // a pattern that does not compile
		"RULE:^CN=(?<=x)a/$1/",      // nor one Go's regexp does not have
	} {
		_, err := parseSSLPrincipalMappingRules(rules)
		require.ErrorIs(t, err, ErrInvalidSSLPrincipalMappingRules, rules)
	}
	_, err := parseSSLPrincipalMappingRules("DEFAULT, RULE:a/b/Lx")
	require.EqualError(t, err, "server: invalid ssl.principal.mapping.rules: `RULE:a/b/Lx`, unmatched substring: `x`")

	for _, tc := range []struct{ want, rules string }{
		{"[DEFAULT]", ""}, // Config's zero value: Kafka's default
		{"[DEFAULT]", "DEFAULT"},
		{"[RULE:/]", "RULE://"},
		{"[RULE:/.*]", "RULE:/.*/"},
		{"[RULE:/.*/L]", "RULE:/.*/L"},
		{"[RULE:/, DEFAULT]", "RULE://,DEFAULT"},
		{"[RULE:/, DEFAULT]", "  RULE:// ,  DEFAULT  "},
		{"[RULE:   /     , DEFAULT]", "  RULE:   /     / ,  DEFAULT  "},
		{"[RULE:  /     /U, DEFAULT]", "  RULE:  /     /U   ,DEFAULT  "},
		{"[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]", "  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  "},
		{"[]", ",   , , ,      , , ,   "},
		{"[RULE:/, DEFAULT]", ",,RULE://,,,DEFAULT,,"},
		{"[RULE: /   , DEFAULT]", ",  , RULE: /   /    ,,,   DEFAULT, ,   "},
		{"[RULE:   /  /U, DEFAULT]", "     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,"},
		{`[RULE:\/\\\(\)\n\t/\/\/]`, `RULE:\/\\\(\)\n\t/\/\//`},
		{`[RULE:\**\/+/*/L, RULE:\/*\**/**]`, `RULE:\**\/+/*/L,RULE:\/*\**/**/`},
		{`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`,
			`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`},
	} {
		m, err := parseSSLPrincipalMappingRules(tc.rules)
		require.NoError(t, err, tc.rules)
		require.Equal(t, tc.want, m.rulesString(), tc.rules)
	}
}

// TestSSLPrincipalMapper: names mapped as Kafka's SslPrincipalMapper maps
// them (its tests' facts), with Java's replaceAll semantics: every match
// replaced, an empty match where a match ends too, references to groups
// the pattern lacks taken literally. Each case's answer is the one Kafka
// 4.4's SslPrincipalMapper gives.
func TestSSLPrincipalMapper(t *testing.T) {
	m, err := parseSSLPrincipalMappingRules(strings.Join([]string{
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
		"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
		"DEFAULT",
	}, ", "))
	require.NoError(t, err)
	for dn, want := range map[string]string{
		"CN=Duke,OU=ServiceUsers,O=Org,C=US":        "duke",
		"CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US": "duke@sme",
		"cn=duke,ou=sme,dc=mycp,dc=com":             "DUKE@SME",
		"cN=duke,OU=JavaSoft,O=Sun Microsystems":    "DUKE",
		"OU=JavaSoft,O=Sun Microsystems,C=US":       "OU=JavaSoft,O=Sun Microsystems,C=US",
	} {
		got, err := m.name(dn)
		require.NoError(t, err, dn)
		require.Equal(t, want, got, dn)
	}

	m, err = parseSSLPrincipalMappingRules(`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`)
	require.NoError(t, err)
	got, err := m.name(`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`)
	require.NoError(t, err)
	require.Equal(t, `Tkac\, Adam`, got)

	for _, tc := range []struct{ rules, dn, want string }{
		{"RULE:.*/x/", "CN=a", "xx"},               // Java: "CN=a".replaceAll(".*", "x")
		{"RULE:(.*)/[$1]/", "CN=a", "[CN=a][]"},    // the empty match's group is empty
		{"RULE:a|ab/x/", "ab", "xb"},               // matches whole, replaces the first match
		{"RULE:(C)N=(.*)/$2@$3/", "CN=a", "a@$3"},  // no group 3: literal
		{"RULE:(C)N=(.*)/$12/", "CN=a", "C2"},      // $12 is group 1 and "2"
		{"RULE:(C)N=(.*)/$0/", "CN=a", "CN=a"},     // group 0 is the match
		{`RULE:(C)N=(.*)/\$1 $2/`, "CN=a", "$1 a"}, // an escaped "$"
		{"RULE:(?P<n>C)N=(.*)/${n}:$2/U", "CN=a", "C:A"},
		{"RULE:^CN=(.*)$/$1/L, RULE:.*/never/", "CN=ÀB", "àb"},
		{"RULE:^CN=(.*)$/$1/, DEFAULT", "O=x", "O=x"},
		{"RULE:(a*)/<$1>/", "aa", "<aa><>"},
	} {
		m, err := parseSSLPrincipalMappingRules(tc.rules)
		require.NoError(t, err, tc.rules)
		got, err := m.name(tc.dn)
		require.NoError(t, err, tc.rules)
		require.Equal(t, tc.want, got, tc.rules)
	}

	// No rule applies: Kafka's NoMatchingRule.
	m, err = parseSSLPrincipalMappingRules("RULE:^CN=(.*)$/$1/")
	require.NoError(t, err)
	_, err = m.name("O=x")
	require.ErrorIs(t, err, errNoMatchingRule)
	m, err = parseSSLPrincipalMappingRules(", ,")
	require.NoError(t, err)
	_, err = m.name("CN=a")
	require.ErrorIs(t, err, errNoMatchingRule, "no rules at all")
	// A replacement Java's replaceAll refuses fails the name.
	for _, rules := range []string{"RULE:CN=a/$/", "RULE:CN=a/$x/", "RULE:CN=a/$1/", "RULE:(CN)=a/${n}/",
		"RULE:(C)(N)=a/$5$6$1/", // Kafka escapes $5, then a "5" for $6, at $5's shifted offset: $6 stays, "No group 6"
	} {
		m, err := parseSSLPrincipalMappingRules(rules)
		require.NoError(t, err, rules)
		_, err = m.name("CN=a")
		require.Error(t, err, rules)
	}
}

// rdn is one relative name of the test's names.
func rdn(atvs ...pkix.AttributeTypeAndValue) pkix.RelativeDistinguishedNameSET { return atvs }

func atv(oid asn1.ObjectIdentifier, tag int, value string) pkix.AttributeTypeAndValue {
	b, err := asn1.Marshal(asn1.RawValue{Tag: tag, Bytes: []byte(value)})
	if err != nil {
		panic(err)
	}
	return pkix.AttributeTypeAndValue{Type: oid, Value: asn1.RawValue{FullBytes: b}}
}

var (
	oidCN     = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOU     = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidO      = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidUID    = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	oidDC     = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}
	oidEmail  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	oidSerial = asn1.ObjectIdentifier{2, 5, 4, 5}
)

type x500Case struct {
	der      []byte
	want     string
	eightBit bool // a BMPString, or an 8-bit string with bytes above 0x7f
}

// x500Cases are DER names and what Java's X500Principal.getName() prints
// for them (checked against Java by TestX500NameAgainstJava).
func x500Cases(t *testing.T) []x500Case {
	t.Helper()
	name := func(rdns ...pkix.RelativeDistinguishedNameSET) []byte {
		b, err := asn1.Marshal(pkix.RDNSequence(rdns))
		require.NoError(t, err)
		return b
	}
	// unsorted is a name of one relative name whose attributes are in
	// the order given, not DER's sorted order.
	unsorted := func(atvs ...pkix.AttributeTypeAndValue) []byte {
		var set []byte
		for _, a := range atvs {
			b, err := asn1.Marshal(a)
			require.NoError(t, err)
			set = append(set, b...)
		}
		b, err := asn1.Marshal([]asn1.RawValue{{Tag: asn1.TagSet, IsCompound: true, Bytes: set}})
		require.NoError(t, err)
		return b
	}
	bmp := string([]byte{0x00, 'Z', 0x00, 'o', 0x00, 0xeb, 0x26, 0x03})
	return []x500Case{
		{name(rdn(atv(asn1.ObjectIdentifier{2, 5, 4, 6}, asn1.TagPrintableString, "US")), rdn(atv(oidO, asn1.TagUTF8String, "Example")),
			rdn(atv(oidOU, asn1.TagUTF8String, "eng")), rdn(atv(oidCN, asn1.TagUTF8String, "alice"))), "CN=alice,OU=eng,O=Example,C=US", false},
		{name(rdn(atv(oidCN, asn1.TagUTF8String, `Smith, John+Jr "x" <y>;z=w#1\`))), `CN=Smith\, John\+Jr \"x\" \<y\>\;z\=w\#1\\`, false},
		{name(rdn(atv(oidCN, asn1.TagUTF8String, "  #lead and trail \r"))), `CN=\ \ \#lead and trail\ \` + "\r", false},
		{name(rdn(atv(oidCN, asn1.TagUTF8String, "   "))), `CN=\ \ \ `, false},
		{name(rdn(atv(oidCN, asn1.TagUTF8String, "bob"), atv(oidUID, asn1.TagUTF8String, "b1"))), "CN=bob+UID=b1", false}, // DER sorts them
		{unsorted(atv(oidUID, asn1.TagUTF8String, "b1"), atv(oidCN, asn1.TagUTF8String, "bob")), "UID=b1+CN=bob", false},
		{name(rdn(atv(oidDC, asn1.TagIA5String, "com")), rdn(atv(oidDC, asn1.TagIA5String, "example")),
			rdn(atv(asn1.ObjectIdentifier{2, 5, 4, 7}, asn1.TagUTF8String, "Paris"), atv(asn1.ObjectIdentifier{2, 5, 4, 8}, asn1.TagUTF8String, "IdF")),
			rdn(atv(asn1.ObjectIdentifier{2, 5, 4, 9}, asn1.TagUTF8String, "1 Rue"))), "STREET=1 Rue,ST=IdF+L=Paris,DC=example,DC=com", false},
		{name(rdn(atv(oidEmail, asn1.TagIA5String, "a@b.c")), rdn(atv(oidSerial, asn1.TagPrintableString, "42")),
			rdn(atv(asn1.ObjectIdentifier{1, 2, 3, 4}, asn1.TagUTF8String, "x,y"))), "1.2.3.4=#0c03782c79,2.5.4.5=#13023432,1.2.840.113549.1.9.1=#16056140622e63", false},
		{name(rdn(atv(oidCN, asn1.TagUTF8String, "Zoë 日本 🙂"))), "CN=Zoë 日本 🙂", false},
		{name(rdn(atv(oidCN, 30, bmp))), "CN=Zoë☃", true},
		{name(rdn(atv(oidCN, 20, "caf\xe9"))), "CN=café", true},
		{name(rdn(atv(oidCN, asn1.TagPrintableString, "x\xffy"))), "CN=xÿy", true},
		{name(rdn(atv(oidCN, asn1.TagUTF8String, "a\x00b"))), `CN=a\00b`, false},
		{name(rdn(atv(oidCN, asn1.TagInteger, "\x05"))), "CN=#020105", false},
		{name(rdn(atv(oidCN, 28, "\x00\x00\x00a"))), "CN=#1c0400000061", false}, // UniversalString: not one Java prints
		{name(), "", false},
	}
}

// TestX500Name: subjects printed as Java's X500Principal.getName() prints
// them.
func TestX500Name(t *testing.T) {
	for _, tc := range x500Cases(t) {
		got, err := x500Name(tc.der)
		require.NoError(t, err, "%x", tc.der)
		require.Equal(t, tc.want, got, "%x", tc.der)
	}
	for _, bad := range [][]byte{nil, {0x30}, {0x30, 0x02, 0x02, 0x00}, {0x30, 0x03, 0x31, 0x01, 0x00}, {0x30, 0x00, 0x00}} {
		_, err := x500Name(bad)
		require.Error(t, err, "%x", bad)
	}
}

// TestX500NameAgainstJava: Java's own X500Principal.getName() for the
// same DER names (the JDK runs testdata/X500Names.java as a source file);
// skipped without java unless KAFKALITE_CLIENTS_REQUIRED=1.
func TestX500NameAgainstJava(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		if os.Getenv("KAFKALITE_CLIENTS_REQUIRED") == "1" {
			t.Fatal("java is required")
		}
		t.Skip("java is not installed")
	}
	cases := x500Cases(t)
	var in bytes.Buffer
	for _, tc := range cases {
		in.WriteString(base64.StdEncoding.EncodeToString(tc.der) + "\n")
	}
	cmd := exec.Command(java, "testdata/X500Names.java")
	cmd.Stdin = &in
	out, err := cmd.Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(cases)+1)
	version, err := strconv.Atoi(lines[0])
	require.NoError(t, err)
	for i, tc := range cases {
		if tc.eightBit && version < 25 {
			continue // older JDKs decode every string type as UTF-8
		}
		b, err := base64.StdEncoding.DecodeString(lines[i+1])
		require.NoError(t, err)
		got, err := x500Name(tc.der)
		require.NoError(t, err)
		require.Equal(t, string(b), got, "Java %d's name of %x", version, tc.der)
	}
}

// FuzzSSLPrincipalMappingRules: whatever the rules and the name, parsing
// refuses with ErrInvalidSSLPrincipalMappingRules or yields rules that
// map the name or fail it with an error, never panicking. Whatever the
// bytes, x500Name prints or refuses them.
func FuzzSSLPrincipalMappingRules(f *testing.F) {
	for _, seed := range []string{
		"DEFAULT", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT", "RULE:.*/x/", "RULE:(C)(N)=a/$5$6$1/",
		`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`, "RULE:(?P<n>C)N=(.*)/${n}:$2/U", ",,RULE://,,,DEFAULT,,", "RULE:a/b/Lx",
	} {
		f.Add(seed, "CN=Duke,OU=ServiceUsers,O=Org,C=US")
	}
	f.Fuzz(func(t *testing.T, rules, dn string) {
		m, err := parseSSLPrincipalMappingRules(rules)
		if err != nil {
			if !errors.Is(err, ErrInvalidSSLPrincipalMappingRules) {
				t.Fatalf("%q: %v", rules, err)
			}
			return
		}
		_, _ = m.name(dn)
		_, _ = x500Name([]byte(dn))
	})
}
