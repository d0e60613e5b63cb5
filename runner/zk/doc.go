// Package zk runs baton on ZooKeeper: a Store that keeps jobs as znodes,
// and (being written) distributed workers that claim actions from a queue
// of znodes.
//
// This package is imported as zkrunner next to go-zookeeper's zk:
//
//	import zkrunner "github.com/batonwf/baton/runner/zk"
package zk
