package webhook

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/log"
)

const (
	// DefaultPort is the port a Server listens on when Options.Port is 0,
	// controller-runtime's.
	DefaultPort = 9443
	// DisabledPort, as Options.Port (any negative value does the same),
	// means no webhook server, controller-runtime's meaning: Register
	// still works, Start serves nothing and returns when its context ends,
	// the readiness check passes, and a manager given such a Server does
	// not run it.
	DisabledPort = -1
	// AnyPort, as Options.Port, makes the Server listen on a free port
	// chosen at Start; Addr tells which. Tests use it. Its value is one
	// past the highest TCP port, so no real port is mistaken for it.
	AnyPort = 1 << 16
	// DefaultMaxRequestBytes is the request body limit when
	// Options.MaxRequestBytes is 0: 64 MiB. A ConversionReview carries
	// every object of a list answer, so it must be generous; admission
	// handlers apply their own lower limit (admission.MaxRequestBytes,
	// 7 MiB: two objects of the API server's 3 MiB plus the envelope).
	DefaultMaxRequestBytes = 64 << 20
)

// Options configure a Server. The zero value serves on :9443 with the
// certificate in the default directory.
type Options struct {
	// Host is the address to listen on; "" means every interface.
	Host string
	// Port is the port to listen on; 0 means DefaultPort (9443), AnyPort a
	// free port chosen at Start, and a negative value (DisabledPort, -1) no
	// server at all.
	Port int
	// CertDir holds the serving certificate and key; "" means
	// <os.TempDir()>/k8s-webhook-server/serving-certs, controller-runtime's
	// default. The files are re-read when they change (checked at most once
	// a second, on a TLS handshake), so a rotated certificate is served
	// without a restart. CertDir, CertName and KeyName are not used when
	// TLSOpts set GetCertificate or Certificates.
	CertDir string
	// CertName is the certificate file in CertDir; "" means "tls.crt".
	CertName string
	// KeyName is the private key file in CertDir; "" means "tls.key".
	KeyName string
	// TLSOpts change the TLS configuration (TLS 1.2 minimum to begin
	// with); nil means none. Use them for client certificate checks,
	// cipher choices, or the certificate itself: a GetCertificate they set
	// (the kubebuilder scaffold's certwatcher.CertWatcher) or Certificates
	// are served instead of CertDir's pair, which is then not read.
	TLSOpts []func(*tls.Config)
	// EnableHTTP2 lets clients speak HTTP/2; false (the default) serves
	// HTTP/1.1 only, which keeps the HTTP/2 rapid-reset and stream-flood
	// attacks (CVE-2023-44487, CVE-2023-39325) away from the webhook. The
	// API server talks HTTP/1.1 to webhooks happily.
	EnableHTTP2 bool
	// Metrics receives the controller_runtime_webhook_* metrics; nil means
	// none are exported.
	Metrics prometheus.Registerer
	// Logger logs the Server's and its handlers' events; the zero value
	// means a logger writing through log/slog's default handler (to
	// silence it: logr.FromSlogHandler(slog.DiscardHandler)). Handlers find
	// it, with the path as "webhook", in logr.FromContextOrDiscard(r.Context()).
	Logger logr.Logger
	// MaxRequestBytes is the largest request body read on any path; 0
	// means DefaultMaxRequestBytes (64 MiB). A larger body is answered 413.
	MaxRequestBytes int64
	// ShutdownTimeout bounds how long Start waits for requests in flight
	// once its context ends; 0 means 30 s. Connections still open then are
	// closed.
	ShutdownTimeout time.Duration
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.Port < 0 {
		o.Port = DisabledPort
	}
	if o.CertDir == "" {
		o.CertDir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	if o.CertName == "" {
		o.CertName = "tls.crt"
	}
	if o.KeyName == "" {
		o.KeyName = "tls.key"
	}
	if o.Logger.GetSink() == nil {
		o.Logger = log.Default()
	}
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 30 * time.Second
	}
	return o
}
