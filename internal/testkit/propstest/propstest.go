// Package propstest holds the checks the configuration tests of the log,
// producer and consumer packages share: parsing a property map that must
// use every name, or that uses some names and ignores the others, naming a subtest after a property map, and the
// configuration errors a bad property or field must give (which property
// each names, and the sentinels each matches).
package propstest

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/props"
)

// Parse requires parse to accept m and to use every name in it, and
// returns the configuration.
func Parse[C any](t testing.TB, parse func(map[string]string) (C, []string, error), m map[string]string) C {
	t.Helper()
	c, unused, err := parse(m)
	require.NoError(t, err)
	require.Empty(t, unused)
	return c
}

// Unused requires parse to accept m and to report as unused every name in
// it but those in used, sorted, and requires m to hold every name of
// ignored (the names a package accepts and ignores, which a test's m
// lists); it returns the configuration. Its checks are asserts: a test
// goes on to check the configuration's values.
func Unused[C, V any](t testing.TB, parse func(map[string]string) (C, []string, error), m map[string]string, ignored map[string]V, used ...string) C {
	t.Helper()
	c, unused, err := parse(m)
	require.NoError(t, err)
	assert.Equal(t, SortedExcept(m, used...), unused, "every unused name, sorted")
	for name := range ignored {
		_, ok := m[name]
		assert.True(t, ok, "%s missing from this test", name)
	}
	return c
}

// Name names a subtest after a property map: name=value pairs in name
// order, comma separated, with "/" (which would nest subtests) as "_".
func Name(m map[string]string) string {
	var parts []string
	for _, k := range props.SortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.ReplaceAll(strings.Join(parts, ","), "/", "_")
}

// SortedExcept returns the names in m but those in used, sorted: the
// unused names a parse of m reports.
func SortedExcept(m map[string]string, used ...string) []string {
	var names []string
	for _, k := range props.SortedKeys(m) {
		if !slices.Contains(used, k) {
			names = append(names, k)
		}
	}
	return names
}

// Errors are a package's configuration errors, as the checks below see
// them: E is its ConfigError type.
type Errors[E error] struct {
	// Invalid is matched by every configuration error.
	Invalid error
	// Unknown is matched by the error for a name the package does not
	// define.
	Unknown error
	// NotSupported, if not nil, is matched by the error for a feature the
	// package does not have.
	NotSupported error
	// Property returns the property an error names.
	Property func(E) string
}

// Properties requires err to join configuration errors, each an E that
// matches Invalid and every sentinel in also, and returns the property each
// names, in order.
func (e Errors[E]) Properties(t testing.TB, err error, also ...error) []string {
	t.Helper()
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "not joined errors: %v", err)
	var names []string
	for _, each := range joined.Unwrap() {
		var ce E
		require.ErrorAs(t, each, &ce)
		for _, s := range append([]error{e.Invalid}, also...) {
			require.ErrorIs(t, each, s)
		}
		names = append(names, e.Property(ce))
	}
	return names
}

// One requires err to be one configuration error naming prop (in its
// Property and its message), that matches sentinel if it is not nil, and
// matches neither Unknown nor NotSupported unless sentinel is that one.
func (e Errors[E]) One(t testing.TB, err error, prop string, sentinel error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, []string{prop}, e.Properties(t, err), "one error: %v", err)
	require.Contains(t, err.Error(), prop)
	if sentinel != nil {
		require.ErrorIs(t, err, sentinel)
	}
	for _, s := range []error{e.Unknown, e.NotSupported} {
		if s != nil && s != sentinel {
			require.NotErrorIs(t, err, s)
		}
	}
}
