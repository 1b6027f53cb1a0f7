package acl_test

import (
	"context"
	"fmt"
	"os"

	"github.com/kafkalite/kafkalite/log"
	"github.com/kafkalite/kafkalite/log/acl"
)

// Alice may write to every topic whose name starts with "orders-"; Bob is
// denied what the ACLs do not allow.
func Example() {
	path, _ := os.MkdirTemp("", "acl-example")
	defer os.RemoveAll(path)
	ctx := context.Background()
	d, err := log.Open(ctx, path, log.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer d.Close()
	a, err := acl.Open(d, acl.Config{SuperUsers: []string{"User:admin"}})
	if err != nil {
		panic(err)
	}
	if _, err := a.CreateAcls(ctx, []acl.Binding{{
		ResourceType: acl.ResourceTopic, ResourceName: "orders-", PatternType: acl.PatternPrefixed,
		Principal: "User:alice", Host: "*", Operation: acl.OpWrite, Permission: acl.Allow,
	}}); err != nil {
		panic(err)
	}
	eu := acl.Resource{Type: acl.ResourceTopic, Name: "orders-eu"}
	fmt.Println(a.Authorize("User:alice", "10.0.0.7", acl.OpWrite, eu))
	fmt.Println(a.Authorize("User:alice", "10.0.0.7", acl.OpDescribe, eu)) // WRITE implies DESCRIBE
	fmt.Println(a.Authorize("User:bob", "10.0.0.8", acl.OpWrite, eu))
	fmt.Println(a.Authorize("User:admin", "10.0.0.9", acl.OpDelete, eu))
	// Output:
	// true
	// true
	// false
	// true
}
