//go:build !race

package zk_test

const raceBuild = false
