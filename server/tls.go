package server

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	rsql "github.com/reorgdb/reorgdb/sql"
)

// TLS as MySQL 8 offers it: the certificate and key of --ssl-cert and
// --ssl-key, or, when no --ssl-* flag is given, a CA and a server
// certificate generated into the data directory on first start (the file
// names of MySQL 8's auto-generation) and reused afterwards. Clients
// choose whether to use it; require_secure_transport makes the server
// refuse those that do not.
const (
	caFile         = "ca.pem"
	caKeyFile      = "ca-key.pem"
	serverCertFile = "server-cert.pem"
	serverKeyFile  = "server-key.pem"
	// certLifetime is that of MySQL 8's generated certificates.
	certLifetime = 10 * 365 * 24 * time.Hour
)

// tlsFiles are the PEM files the server's TLS uses.
type tlsFiles struct{ cert, key, ca string }

// loadTLS loads or generates the server's certificate and sets the ssl
// system variables to the files used.
func loadTLS(cfg Config) (*tls.Config, error) {
	f, err := tlsPaths(cfg)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if f.ca != "" {
		pool, err := loadCA(f.ca)
		if err != nil {
			return nil, err
		}
		// Client certificates are optional, as in MySQL, where only an
		// account's REQUIRE X509 makes them mandatory.
		conf.ClientCAs, conf.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	err = gms.SystemVariables.AssignValues(map[string]any{"ssl_cert": f.cert, "ssl_key": f.key, "ssl_ca": f.ca})
	return conf, err
}

// tlsPaths returns the files named by the flags or, with none given,
// those in the data directory, generating them first if they are absent.
func tlsPaths(cfg Config) (tlsFiles, error) {
	if cfg.SSLCert != "" || cfg.SSLKey != "" || cfg.SSLCA != "" {
		if cfg.SSLCert == "" || cfg.SSLKey == "" {
			return tlsFiles{}, errors.New("TLS: --ssl-cert and --ssl-key must be given together (with --ssl-ca or without)")
		}
		return tlsFiles{cert: cfg.SSLCert, key: cfg.SSLKey, ca: cfg.SSLCA}, nil
	}
	f := tlsFiles{
		cert: filepath.Join(cfg.DataDir, serverCertFile),
		key:  filepath.Join(cfg.DataDir, serverKeyFile),
		ca:   filepath.Join(cfg.DataDir, caFile),
	}
	_, certErr := os.Stat(f.cert)
	_, keyErr := os.Stat(f.key)
	switch {
	case certErr == nil && keyErr == nil:
		if _, err := os.Stat(f.ca); err != nil {
			f.ca = ""
		}
		return f, nil
	case os.IsNotExist(certErr) && os.IsNotExist(keyErr):
		if err := generateCerts(cfg.DataDir); err != nil {
			return tlsFiles{}, err
		}
		cfg.Logger.Info("generated a self-signed CA and server certificate for TLS", "ca", f.ca, "cert", f.cert)
		return f, nil
	case certErr == nil:
		return tlsFiles{}, fmt.Errorf("TLS: %s exists without %s", f.cert, f.key)
	default:
		return tlsFiles{}, fmt.Errorf("TLS: %s exists without %s", f.key, f.cert)
	}
}

func loadCA(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("TLS: no certificate in %s", path)
	}
	return pool, nil
}

// generateCerts writes a self-signed CA and a server certificate it
// signs, RSA 2048 as MySQL 8 generates them, with the private keys
// readable by the owner only.
func generateCerts(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	now := time.Now()
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "ReorgDB_Server_Auto_Generated_CA_Certificate"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "ReorgDB_Server_Auto_Generated_Server_Certificate"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// Unlike MySQL's, valid for the local names, so that clients on
		// this machine can verify the host too (VERIFY_IDENTITY).
		DNSNames:    localNames(),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	// The server's files last, so that a crash in between leaves them
	// absent and the next start generates everything again.
	for _, w := range []struct {
		name, typ string
		der       []byte
		mode      os.FileMode
	}{
		{caKeyFile, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(caKey), 0o600},
		{caFile, "CERTIFICATE", caDER, 0o644},
		{serverKeyFile, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key), 0o600},
		{serverCertFile, "CERTIFICATE", der, 0o644},
	} {
		if err := writePEM(filepath.Join(dir, w.name), w.typ, w.der, w.mode); err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
	}
	return nil
}

func localNames() []string {
	names := []string{"localhost"}
	if h, err := os.Hostname(); err == nil && h != "" && h != "localhost" {
		names = append(names, h)
	}
	return names
}

// writePEM writes a file atomically with its final permissions.
func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if err := pem.Encode(f, &pem.Block{Type: typ, Bytes: der}); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// addTLSVariables adds what go-mysql-server lacks of MySQL's TLS system
// variables, and makes read-only those it has as settable: the server
// reads the files at startup only (it has no ALTER INSTANCE RELOAD TLS).
func addTLSVariables() {
	global := gms.GetMysqlScope(gms.SystemVariableScope_Global)
	readOnly := func(name, value string) gms.SystemVariable {
		return &gms.MysqlSystemVariable{Name: name, Scope: global, Type: types.NewSystemStringType(name), Default: value}
	}
	gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{
		readOnly("have_ssl", "YES"),
		readOnly("have_openssl", "YES"),
		readOnly("ssl_cert", ""),
		readOnly("ssl_key", ""),
		readOnly("ssl_ca", ""),
		readOnly("tls_version", "TLSv1.2,TLSv1.3"),
	})
}

// errInsecureTransport is MySQL's answer to a login without TLS while
// require_secure_transport is ON.
func errInsecureTransport() error {
	return mysql.NewSQLError(3159, mysql.SSUnknownSQLState,
		"Connections using insecure transport are prohibited while --require_secure_transport=ON.")
}

// secureEnough refuses a connection without TLS while
// require_secure_transport is ON.
func secureEnough(c *mysql.Conn) error {
	if !c.TLSEnabled() && rsql.GlobalInt("require_secure_transport", 0) != 0 {
		return errInsecureTransport()
	}
	return nil
}

// tlsVersionName is the protocol's name as Ssl_version shows it.
func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	}
	return tls.VersionName(v)
}
