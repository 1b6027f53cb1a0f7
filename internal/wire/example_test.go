package wire_test

import (
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/internal/wire"
)

// errInvalid stands for a codec's sentinel, which a Writer's errors wrap.
var errInvalid = errors.New("example: value not representable")

// A codec writes a structure field by field and checks once, in Finish.
// The same string is shown in both forms of Kafka's generated schemas
// (see the package doc): non-flexible, an int16 length; flexible (a compact
// string), uvarint(len+1). A null compact string is a single 00, and 300
// as an unsigned varint is ac 02.
func ExampleWriter() {
	w := wire.Writer{What: "ExampleValue", Invalid: errInvalid}
	w.Int16(1)                          // version
	w.Int32(7)                          // an int32 field
	w.String("name", "orders", false)   // int16 length 6, then the bytes
	w.String("name", "orders", true)    // compact: uvarint 7, then the bytes
	w.NullableString("rack", nil, true) // compact null: uvarint 0
	w.Uvarint(300)
	w.NoTaggedFields() // an empty tagged-field section: 00
	b, err := w.Finish(nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", b)
	// Output:
	// 00 01 00 00 00 07 00 06 6f 72 64 65 72 73 07 6f 72 64 65 72 73 00 ac 02 00
}

// A codec reads a structure with one Reader and checks once: the first
// failure is sticky and says which field broke, where and why. Here a
// flexible structure's compact string claims 10 bytes but 3 are left.
func ExampleReader() {
	r := wire.NewReader([]byte{0x00, 0x01, 0x07, 'o', 'r', 'd', 'e', 'r', 's', 0x00, 0xac, 0x02}, "ExampleValue")
	r.Ver = int(r.Int16("version"))
	name := r.String("name", true)
	rack := r.NullableString("rack", true)
	n := r.Uvarint("count")
	fmt.Printf("v%d name=%q rack=%v count=%d ok=%v\n", r.Ver, name, rack, n, r.OK())

	bad := wire.NewReader([]byte{0x00, 0x01, 0x0b, 'o', 'r', 'd'}, "ExampleValue")
	bad.Ver = int(bad.Int16("version"))
	_ = bad.String("name", true)
	fmt.Printf("%s at byte %d: %s\n", bad.Err.What, bad.Err.Offset, bad.Err.Reason)
	// Output:
	// v1 name="orders" rack=<nil> count=300 ok=true
	// ExampleValue v1: name at byte 2: string length 10 past the end (3 bytes left)
}
