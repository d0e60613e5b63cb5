module github.com/batonwf/baton

go 1.26

require (
	github.com/go-zookeeper/zk v1.0.4
	github.com/google/go-cmp v0.7.0
	go.etcd.io/bbolt v1.5.0
	pgregory.net/rapid v1.3.0
)

require golang.org/x/sys v0.45.0 // indirect
