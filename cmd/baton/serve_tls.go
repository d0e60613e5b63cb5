package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"
)

// serverTLS returns the TLS configuration of 'baton serve', or nil
// without --tls-cert: TLS 1.2 at least, the certificate read again on the
// handshake after its files change, and with --tls-client-ca client
// certificates required.
func serverTLS(f serveFlags) (*tls.Config, error) {
	if f.tlsCert == "" {
		return nil, nil
	}
	kp := &keyPair{cert: f.tlsCert, key: f.tlsKey}
	if _, err := kp.get(nil); err != nil {
		return nil, err
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.get}
	if f.tlsClientCA != "" {
		pem, err := os.ReadFile(f.tlsClientCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-client-ca %s: no PEM certificate in it", f.tlsClientCA)
		}
		conf.ClientCAs, conf.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return conf, nil
}

// keyPair is a certificate and key read from files, and read again when
// either file's size or modification time changes.
type keyPair struct {
	cert, key string

	mu    sync.Mutex
	stamp string
	pair  *tls.Certificate
}

func (kp *keyPair) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	kp.mu.Lock()
	defer kp.mu.Unlock()
	stamp, err := fileStamp(kp.cert, kp.key)
	if err != nil {
		if kp.pair != nil {
			return kp.pair, nil // mid-rotation: keep serving the old one
		}
		return nil, err
	}
	if kp.pair != nil && stamp == kp.stamp {
		return kp.pair, nil
	}
	certPEM, err := os.ReadFile(kp.cert)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert: %v", err)
	}
	keyPEM, err := os.ReadFile(kp.key)
	if err != nil {
		return nil, fmt.Errorf("--tls-key: %v", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if kp.pair != nil {
			return kp.pair, nil // a half-written pair: keep the old one
		}
		return nil, fmt.Errorf("--tls-cert %s, --tls-key %s: %v", kp.cert, kp.key, err)
	}
	kp.pair, kp.stamp = &pair, stamp
	return kp.pair, nil
}

// fileStamp is the size and modification time of files.
func fileStamp(files ...string) (string, error) {
	var b bytes.Buffer
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d/%s;", fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
	}
	return b.String(), nil
}
