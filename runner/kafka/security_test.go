package kafka_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// selfSigned returns a server TLS configuration for 127.0.0.1 and a client
// one that trusts it.
func selfSigned(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	client = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return server, client
}

// TestTLSAndSASL runs a job on a broker that takes TLS connections only
// and authenticates them with SASL PLAIN: Config.TLS and Config.SASL reach
// every connection (writers, readers, groups, admin requests). Wrong
// credentials are refused by Open with an error.
func TestTLSAndSASL(t *testing.T) {
	serverTLS, clientTLS := selfSigned(t)
	c := privateCluster(t, kfake.TLS(serverTLS), kfake.EnableSASL(), kfake.Superuser("PLAIN", "baton", "s3cret"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.Brokers = c.ListenAddrs()
	cfg.TLS = clientTLS
	cfg.SASL = plain.Mechanism{Username: "baton", Password: "s3cret"}
	counter := newCounter(t)
	r := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: counter.reg}, Store: openStore(t, cfg)})
	if err := r.Submit(ctx, "secure", fanJob()); err != nil {
		t.Fatal(err)
	}
	j, err := r.Wait(ctx, "secure")
	if err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("%v %v", j, err)
	}

	bad := cfg
	bad.SASL = plain.Mechanism{Username: "baton", Password: "wrong"}
	bad.Timeout = 3 * time.Second
	octx, ocancel := context.WithTimeout(ctx, 10*time.Second)
	defer ocancel()
	if st, err := kafkarunner.Open(octx, bad); err == nil {
		st.Close()
		t.Fatal("Open with a wrong password succeeded")
	} else {
		t.Logf("wrong password: %v", err)
	}
	noTLS := cfg
	noTLS.TLS = nil
	noTLS.Timeout = 3 * time.Second
	if st, err := kafkarunner.Open(octx, noTLS); err == nil {
		st.Close()
		t.Fatal("Open without TLS succeeded")
	}
}
