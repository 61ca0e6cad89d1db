package webhook_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/conversion"
	"github.com/kubeloop/kubeloop/webhook/internal/testwidget"
)

// TestConversionWebhookPanicsMetric: controller-runtime's
// controller_runtime_conversion_webhook_panics_total (a counter without
// labels, with its help text) is served at 0 from the start and counts a
// panic in a conversion function; the server's own
// controller_runtime_webhook_panics_total{webhook} counts it too.
func TestConversionWebhookPanicsMetric(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, testwidget.AddToScheme(scheme))
	ca := webhook.NewCertAuthority("unit-ca")
	reg := prometheus.NewRegistry()
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca), Metrics: reg, Logger: quiet})
	srv.Register("/convert", conversion.NewWebhook(scheme))
	startServer(t, srv)
	c := httpsClient(ca, false)
	defer c.CloseIdleConnections()

	panics := func() float64 {
		t.Helper()
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() != "controller_runtime_conversion_webhook_panics_total" {
				continue
			}
			assert.Equal(t, "Total number of conversion webhook panics", mf.GetHelp())
			assert.Equal(t, dto.MetricType_COUNTER, mf.GetType())
			require.Len(t, mf.GetMetric(), 1)
			assert.Empty(t, mf.GetMetric()[0].GetLabel(), "no labels, as controller-runtime's")
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
		t.Fatal("controller_runtime_conversion_webhook_panics_total is not served")
		return 0
	}
	assert.Equal(t, 0.0, panics(), "served from the start")

	convert := func(obj string) string {
		t.Helper()
		review := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u1","desiredAPIVersion":"test.kubeloop.dev/v3","objects":[` + obj + `]}}`
		resp, err := c.Post("https://"+srv.Addr()+"/convert", "application/json", bytes.NewReader([]byte(review)))
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		return string(body)
	}
	assert.Contains(t, convert(`{"apiVersion":"test.kubeloop.dev/v1","kind":"Widget","spec":{"color":"blue"}}`), `"status":"Success"`)
	assert.Equal(t, 0.0, panics(), "a conversion that works is no panic")

	assert.Contains(t, convert(`{"apiVersion":"test.kubeloop.dev/v1","kind":"Widget","spec":{"color":"panic"}}`), "a conversion function panicked")
	assert.Equal(t, 1.0, panics())
	assert.Equal(t, 1.0, metricValue(t, reg, "controller_runtime_webhook_panics_total", "webhook", "/convert"))
}
