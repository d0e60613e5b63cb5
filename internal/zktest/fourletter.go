package zktest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// FourLetter sends a four-letter command ("srvr", "conf", "mntr", "stat",
// ...) to the server at addr and returns its answer; 1 s to connect, 2 s in
// all. (go-zookeeper's FLWSrvr cannot parse srvr of ZooKeeper 3.7 and
// later.)
func FourLetter(addr, cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 1<<20))
	if err != nil {
		return "", fmt.Errorf("%s to %s: %w", cmd, addr, err)
	}
	return string(b), nil
}

var errNotServing = errors.New("not serving requests")

// srvrMode is the Mode line of srvr.
func srvrMode(addr string) (string, error) {
	out, err := FourLetter(addr, "srvr")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	if strings.Contains(out, "not currently serving") {
		return "", fmt.Errorf("%s: %w", addr, errNotServing)
	}
	return "", fmt.Errorf("%s: no mode in srvr's answer %q", addr, out)
}
