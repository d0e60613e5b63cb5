package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store/bolt"
)

// serveURL returns the base URL 'baton serve' printed.
func serveURL(t *testing.T, p *inProcess) string {
	t.Helper()
	m := regexp.MustCompile(`baton serve: (https?://[^/]+)/api/v1`).FindStringSubmatch(p.errOut.String())
	if m == nil {
		t.Fatalf("no address on stderr:\n%s", p.errOut.String())
	}
	return m[1]
}

// The start-up check refuses a public address without tokens, or without
// TLS unless --insecure-http. No test listens beyond loopback: the check
// comes before the listener.
func TestServeListenCheck(t *testing.T) {
	for _, c := range []struct {
		f    serveFlags
		want string
	}{
		{serveFlags{listen: "127.0.0.1:8080"}, ""},
		{serveFlags{listen: "[::1]:8080"}, ""},
		{serveFlags{listen: "localhost:8080"}, ""},
		{serveFlags{listen: "0.0.0.0:8080"}, "--token-file"},
		{serveFlags{listen: ":8080"}, "--token-file"},
		{serveFlags{listen: "example.org:8080"}, "--token-file"},
		{serveFlags{listen: "10.1.2.3:8080", tokenFile: "t"}, "--insecure-http"},
		{serveFlags{listen: "10.1.2.3:8080", tokenFile: "t", insecureHTTP: true}, ""},
		{serveFlags{listen: "10.1.2.3:8080", tokenFile: "t", tlsCert: "c", tlsKey: "k"}, ""},
		{serveFlags{listen: "127.0.0.1:8080", tlsCert: "c"}, "go together"},
		{serveFlags{listen: "127.0.0.1:8080", tlsClientCA: "ca"}, "needs --tls-cert"},
		{serveFlags{listen: "nope"}, "HOST:PORT"},
		{serveFlags{listen: "127.0.0.1:8080", metricsListen: "127.0.0.1:9090"}, ""},
		{serveFlags{listen: "127.0.0.1:8080", metricsListen: "0.0.0.0:9090"}, "--metrics-listen"},
		{serveFlags{listen: "127.0.0.1:8080", metricsListen: "9090"}, "--metrics-listen"},
	} {
		err := checkServe(c.f)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("checkServe(%+v) = %v, want %q", c.f, err, c.want)
		}
	}
	db := filepath.Join(t.TempDir(), "baton.db")
	r := baton(t, "serve", "--store", db, "--listen", "0.0.0.0:0").want(t, exitError)
	contains(t, "stderr", r.stderr, "--token-file")
	if _, err := os.Stat(db); err == nil {
		t.Errorf("the store was made before the flags were checked")
	}
}

func TestServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	// An unfinished job left in the file: serve resumes it.
	st, err := bolt.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	root, err := ast.Decode([]byte(helloJSON))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := job.New("left", root)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(t.Context(), tr.Job); err != nil {
		t.Fatal(err)
	}
	st.Close()

	p := startInProcess(t, "baton serve: http", "serve", "--store", db, "--listen", "127.0.0.1:0")
	c := client.New(serveURL(t, p), client.Options{})
	ctx := t.Context()
	sum, err := c.Wait(ctx, "left")
	if err != nil || sum.Status != "succeeded" {
		t.Fatalf("the left job: %+v, %v", sum, err)
	}
	sum, created, err := c.Submit(ctx, "hello", []byte(helloJSON))
	if err != nil || !created || sum.ID != "hello" {
		t.Fatalf("submit: %+v, %v", sum, err)
	}
	if sum, err = c.Wait(ctx, "hello"); err != nil || sum.Status != "succeeded" {
		t.Fatalf("wait: %+v, %v", sum, err)
	}
	if _, _, err := c.Submit(ctx, "x", []byte(`{"version":1,"root":{"act":"nope"}}`)); client.Code(err) != "unknown_action" {
		t.Errorf("an action with no built-in: %v", err)
	}
	if a, err := c.Actions(ctx); err != nil || strings.Join(a.Actions, ",") != "fail,http.get,log,sleep,value" {
		t.Errorf("actions: %+v, %v", a, err)
	}
	contains(t, "stdout", p.out.String(), "hello par[0]#1: a\n")
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit status %d after the interrupt:\n%s", code, p.errOut.String())
	}
	contains(t, "stderr", p.errOut.String(), `route="POST /api/v1/jobs" status=201`)
	// It says it stopped, last (it said only that it was stopping).
	if !strings.HasSuffix(p.errOut.String(), "baton serve: stopped\n") {
		t.Errorf("stderr does not end with 'baton serve: stopped':\n%s", p.errOut.String())
	}
}

// TestServeShutdown: submits in flight when the server stops are done
// (201) or refused (503 shutting_down), never half done; open event
// streams get a shutdown event and end; exit 0.
func TestServeShutdown(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	p := startInProcess(t, "baton serve: http", "serve", "--store", db, "--listen", "127.0.0.1:0")
	c := client.New(serveURL(t, p), client.Options{HTTPClient: &http.Client{Transport: &http.Transport{}}})
	// Open streams: a running job's and the list's; each must end with a
	// shutdown event.
	if _, _, err := c.Submit(t.Context(), "sleeper", []byte(`{"version":1,"root":{"act":"sleep","payload":"1h"}}`)); err != nil {
		t.Fatal(err)
	}
	streamEnds := map[string]chan string{}
	for _, path := range []string{"/api/v1/jobs/sleeper/events", "/api/v1/events"} {
		resp, err := http.Get(serveURL(t, p) + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", path, resp, err)
		}
		last := make(chan string, 1)
		streamEnds[path] = last
		go func() {
			defer resp.Body.Close()
			var typ string
			err := live.ReadEvents(resp.Body, func(ev live.Event) error { typ = ev.Type; return nil })
			last <- fmt.Sprintf("%s %v", typ, err)
		}()
	}
	var mu sync.Mutex
	answers := map[job.ID]string{}
	created := 0
	var wg sync.WaitGroup
	// Eight callers submit until the server is gone; once 20 jobs are in,
	// it is interrupted with submits in flight.
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := job.ID(fmt.Sprintf("j-%d-%d", w, i))
				_, ok, err := c.Submit(context.Background(), id, []byte(`{"version":1,"root":{"act":"sleep","payload":"10ms"}}`))
				mu.Lock()
				switch {
				case ok:
					answers[id] = "created"
					if created++; created == 20 {
						p.cancel()
					}
				case client.Code(err) == "shutting_down":
					answers[id] = "refused"
				default:
					answers[id] = "unsent" // the listener was closed: it never reached the server
				}
				mu.Unlock()
				if err != nil && client.Code(err) != "shutting_down" {
					return
				}
			}
		}()
	}
	wg.Wait()
	if code := p.stop(t); code != exitOK {
		t.Fatalf("exit status %d:\n%s", code, p.errOut.String())
	}
	for path, last := range streamEnds {
		if got := <-last; got != "shutdown <nil>" {
			t.Errorf("stream %s ended with %q, want a shutdown event", path, got)
		}
	}
	counts := map[string]int{}
	for _, a := range answers {
		counts[a]++
	}
	t.Logf("answers: %v", counts)
	st, err := bolt.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id, a := range answers {
		_, err := st.Load(t.Context(), id)
		switch {
		case a == "created" && err != nil:
			t.Errorf("job %s answered 201 is not stored: %v", id, err)
		case a != "created" && err == nil:
			t.Errorf("job %s answered %s is stored", id, a)
		}
	}
}

// TestServeTLS: TLS 1.2 at least, HTTP/2, a replaced certificate served on
// the next handshake, and client certificates required with
// --tls-client-ca.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	pool := x509.NewCertPool()
	writePair := func(serial int64) {
		cert, key := selfSigned(t, serial)
		pool.AppendCertsFromPEM(cert)
		if err := os.WriteFile(certFile, cert, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writePair(1)
	db := filepath.Join(dir, "baton.db")
	p := startInProcess(t, "baton serve: https", "serve", "--store", db, "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	url := serveURL(t, p)
	get := func() (*http.Response, error) {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	resp, err := get()
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 || resp.TLS.PeerCertificates[0].SerialNumber.Int64() != 1 {
		t.Errorf("proto %s, serial %v", resp.Proto, resp.TLS.PeerCertificates[0].SerialNumber)
	}
	if resp.TLS.Version < tls.VersionTLS12 {
		t.Errorf("TLS version %x", resp.TLS.Version)
	}
	// Rotation: new files, served on the next handshake. The stamp is
	// size and modification time; make sure the time moves.
	writePair(2)
	later := time.Now().Add(time.Minute)
	os.Chtimes(certFile, later, later)
	if resp, err = get(); err != nil || resp.TLS.PeerCertificates[0].SerialNumber.Int64() != 2 {
		t.Errorf("after rotation: %v, %v", resp, err)
	}
	p.stop(t)

	// Mutual TLS: no client certificate, no connection.
	ca := filepath.Join(dir, "ca.pem")
	cert, _ := selfSigned(t, 3)
	if err := os.WriteFile(ca, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	p = startInProcess(t, "baton serve: https", "serve", "--store", db, "--listen", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", ca)
	url = serveURL(t, p)
	if _, err := get(); err == nil {
		t.Error("mutual TLS without a client certificate was accepted")
	}
}

// selfSigned makes a certificate for 127.0.0.1 and its key, PEM.
func selfSigned(t *testing.T, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "baton test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// TestServeTransport: net/http's own limits as serve sets them from its
// flags: headers over --max-header-bytes get 431 (16 KiB would pass the
// default 64 KiB), and a request line trickled in is cut (after
// --read-header-timeout) while the server goes on answering.
func TestServeTransport(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	p := startInProcess(t, "baton serve: http", "serve", "--store", db, "--listen", "127.0.0.1:0",
		"--max-header-bytes", "1024", "--read-header-timeout", "300ms")
	base := serveURL(t, p)
	req, err := http.NewRequest("GET", base+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Big", strings.Repeat("x", 16<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("16 KiB of headers past --max-header-bytes 1024: %d", resp.StatusCode)
	}

	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /heal")); err != nil {
		t.Fatal(err)
	}
	// The server closes the connection: the read ends (EOF or reset).
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := io.ReadAll(conn); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the trickled request: %v", err)
	}
	resp, err = http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after: %v, %v", resp, err)
	}
	resp.Body.Close()
}
