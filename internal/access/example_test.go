package access_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kafkalite/kafkalite/internal/access"
	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/vfs"
	"github.com/kafkalite/kafkalite/record"
)

// A coordinator creates its internal topic and appends to it by passing
// the token, access.Internal{}, to the log's internal methods
// (Dir.InternalTopic, Log.AppendInternal). The ordinary Append refuses
// internal topics such as __consumer_offsets with log.ErrInternalTopic,
// and code outside the module cannot name the token to get past it. The
// Dir is on a memory filesystem, as the module's tests open one.
func Example() {
	ctx := context.Background()
	cfg := log.DefaultConfig()
	cfg.FS = vfs.NewMem()
	d, err := log.Open(ctx, "/data", cfg)
	if err != nil {
		panic(err)
	}
	defer d.Close()
	parts, err := d.InternalTopic(access.Internal{}, ctx, "__consumer_offsets", 1, map[string]string{"cleanup.policy": "compact"})
	if err != nil {
		panic(err)
	}

	batch, err := record.AppendBatch(nil, record.BatchHeader{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		record.DefaultLevel, []record.Record{{Timestamp: 1700000000000, Key: []byte("k"), Value: []byte("v")}})
	if err != nil {
		panic(err)
	}
	_, err = parts[0].Append(batch)
	fmt.Println("Append:", errors.Is(err, log.ErrInternalTopic))
	res, err := parts[0].AppendInternal(access.Internal{}, batch)
	if err != nil {
		panic(err)
	}
	fmt.Println("AppendInternal: offset", res.BaseOffset, "log end offset", parts[0].LogEndOffset())
	// Output:
	// Append: true
	// AppendInternal: offset 0 log end offset 1
}
