// Package access holds a token that only kafkalite's own packages can make.
// Methods that take one (appending to internal topics, creating them) are
// for the coordinators and the cleaner: code outside this module cannot
// import this package, so it cannot name the type or build a value of it.
package access

// Internal is the token. Its zero value is the token: `access.Internal{}`.
type Internal struct{ _ struct{} }
