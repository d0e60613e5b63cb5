package zktest

import (
	"fmt"
	"net"
	"sync"
)

// given holds the ports this process has handed out, so that two servers
// of one test binary never get the same one (the kernel may give a closed
// port out again at once). Another process can still take a port between
// freePorts and the server's bind: Start and StartEnsemble then try again
// on fresh ports.
var given = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePorts returns n distinct free TCP ports of 127.0.0.1: each was bound
// (all at once, so they differ) and closed again.
func freePorts(n int) ([]int, error) {
	given.Lock()
	defer given.Unlock()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries >= 10*n+10 {
			return nil, fmt.Errorf("no free ports: %d found of %d", len(ports), n)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l) // held until the end, so the next Listen gets another port
		port := l.Addr().(*net.TCPAddr).Port
		if given.ports[port] {
			continue
		}
		ports = append(ports, port)
	}
	for _, p := range ports {
		given.ports[p] = true
	}
	return ports, nil
}
