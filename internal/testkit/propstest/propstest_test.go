package propstest_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kafkalite/kafkalite/internal/testkit/propstest"
)

func TestName(t *testing.T) {
	require.Equal(t, "a=1,b=x_y", propstest.Name(map[string]string{"b": "x/y", "a": "1"}))
	require.Equal(t, "", propstest.Name(nil))
}

func TestSortedExcept(t *testing.T) {
	m := map[string]string{"c": "", "a": "", "b": ""}
	require.Equal(t, []string{"a", "c"}, propstest.SortedExcept(m, "b"))
	require.Equal(t, []string{"a", "b", "c"}, propstest.SortedExcept(m))
	require.Nil(t, propstest.SortedExcept(m, "a", "b", "c"))
}

func TestParse(t *testing.T) {
	parse := func(m map[string]string) (int, []string, error) { return len(m), nil, nil }
	require.Equal(t, 2, propstest.Parse(t, parse, map[string]string{"a": "1", "b": "2"}))
}

func TestUnused(t *testing.T) {
	parse := func(m map[string]string) (int, []string, error) {
		return len(m), propstest.SortedExcept(m, "a"), nil
	}
	m := map[string]string{"a": "1", "c": "", "b": ""}
	require.Equal(t, 3, propstest.Unused(t, parse, m, map[string]bool{"b": true, "c": true}, "a"))
	require.Equal(t, 3, propstest.Unused[int, bool](t, parse, m, nil, "a"))
}

// configError is a package's ConfigError: it matches errInvalid, and
// errUnknown for an unknown name.
type configError struct {
	prop    string
	unknown bool
}

var errInvalid, errUnknown = errors.New("invalid"), errors.New("unknown")

func (e *configError) Error() string { return "bad " + e.prop }

func (e *configError) Is(target error) bool {
	return target == errInvalid || (e.unknown && target == errUnknown)
}

func TestErrors(t *testing.T) {
	configErrors := propstest.Errors[*configError]{Invalid: errInvalid, Unknown: errUnknown,
		Property: func(ce *configError) string { return ce.prop }}
	err := errors.Join(&configError{prop: "b.c", unknown: true}, &configError{prop: "a"})
	require.Equal(t, []string{"b.c", "a"}, configErrors.Properties(t, err))
	require.Equal(t, []string{"b.c"}, configErrors.Properties(t, errors.Join(&configError{prop: "b.c", unknown: true}), errUnknown))
	configErrors.One(t, errors.Join(&configError{prop: "a"}), "a", nil)
	configErrors.One(t, errors.Join(&configError{prop: "x", unknown: true}), "x", errUnknown)
}
