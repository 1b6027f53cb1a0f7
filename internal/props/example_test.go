package props_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/kafkalite/kafkalite/internal/props"
)

// Values parse as Kafka's ConfigDef parses them: surrounding whitespace is
// trimmed, booleans ignore case, lists split on commas. A long in
// milliseconds that may be unlimited (retention.ms) maps -1 and
// Long.MAX_VALUE to Unlimited, which prints back as Long.MAX_VALUE.
func Example_values() {
	n, _ := props.Long(" 1073741824 ")    // segment.bytes
	b, _ := props.Bool("TRUE")            // preallocate
	list := props.List("compact, delete") // cleanup.policy
	week, _ := props.Millis("604800000", true)
	forever, _ := props.Millis("-1", true)
	huge, _ := props.Millis(props.MaxLong, true)
	_, err := props.Int("2147483648") // one past Integer.MAX_VALUE
	fmt.Println(n, b, list, len(list))
	fmt.Println(week, forever == props.Unlimited, huge == props.Unlimited, props.FormatMillis(forever, true))
	fmt.Println(err)
	// Output:
	// 1073741824 true [compact delete] 2
	// 168h0m0s true true 9223372036854775807
	// not an int (32-bit decimal integer)
}

// A package's config parser, in small: a table of properties (Prop)
// applies a Kafka property map to a Config started from Kafka's defaults,
// Sift sets aside the names Kafka defines but the package ignores and
// refuses unknown ones, and Print gives the properties back. The errors
// come from the package's constructor; a nil sentinel means invalid, and
// only Unknown passes one.
func ExampleApply() {
	type Config struct {
		BatchSize   int           // batch.size
		Linger      time.Duration // linger.ms
		Idempotence bool          // enable.idempotence
	}
	table := map[string]props.Prop[Config]{
		"batch.size":         props.IntProp(func(c *Config) *int { return &c.BatchSize }),
		"linger.ms":          props.MillisProp(func(c *Config) *time.Duration { return &c.Linger }, false),
		"enable.idempotence": props.BoolProp(func(c *Config) *bool { return &c.Idempotence }),
	}
	newErr := func(prop, value, reason string, sentinel error) error {
		return errors.New(props.ErrorMessage("example", prop, value, reason, sentinel != nil))
	}
	errUnknown := errors.New("example: unknown property")
	ignored := props.In(map[string]func(string) error{"acks": nil, "retries": props.CheckAtLeast(0, true)})
	parse := func(m map[string]string) (Config, []string, error) {
		c := Config{BatchSize: 16384, Linger: 5 * time.Millisecond, Idempotence: true} // Kafka 4.x defaults
		unused, errs := props.Sift(m, table, ignored, props.Unknown(newErr, errUnknown), props.Invalid(newErr))
		errs = append(errs, props.Apply(&c, m, table, props.SortedKeys(table), props.Invalid(newErr))...)
		return c, unused, errors.Join(errs...)
	}

	c, unused, err := parse(map[string]string{"batch.size": " 65536 ", "linger.ms": "20", "acks": "all"})
	fmt.Printf("%+v, ignored %v, err %v\n", c, unused, err)
	fmt.Print(props.String(props.Print(&c, table)))
	_, _, err = parse(map[string]string{"enable.idempotence": "yes", "retries": "-1", "colour": "red"})
	fmt.Println(err)
	// Output:
	// {BatchSize:65536 Linger:20ms Idempotence:true}, ignored [acks], err <nil>
	// batch.size=65536
	// enable.idempotence=true
	// linger.ms=20
	// example: unknown property "colour"
	// example: invalid retries="-1": must be at least 0
	// example: invalid enable.idempotence="yes": not true or false
}
