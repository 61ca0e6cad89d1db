package leaderelection

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaulted(t *testing.T) {
	o, err := Options{ID: "x", Namespace: "ns"}.defaulted()
	require.NoError(t, err)
	assert.Equal(t, DefaultLeaseDuration, o.LeaseDuration)
	assert.Equal(t, DefaultRenewDeadline, o.RenewDeadline)
	assert.Equal(t, DefaultRetryPeriod, o.RetryPeriod)
	host, err := os.Hostname()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(o.Identity, host+"_"), "identity %q is hostname_uuid", o.Identity)
	assert.Len(t, o.Identity, len(host)+1+36)

	o2, err := Options{ID: "x", Namespace: "ns"}.defaulted()
	require.NoError(t, err)
	assert.NotEqual(t, o.Identity, o2.Identity, "each process gets its own identity")
	assert.NoError(t, o.validate())
	assert.Equal(t, 5*time.Second, o.requestTimeout())
}

func TestValidate(t *testing.T) {
	valid := Options{ID: "lease", Namespace: "ns", Identity: "me", LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	tests := []struct {
		name   string
		modify func(*Options)
		want   []string
	}{
		{name: "valid", modify: func(*Options) {}},
		{name: "missing ID", modify: func(o *Options) { o.ID = "" }, want: []string{"ID (the Lease name) is required"}},
		{name: "bad ID", modify: func(o *Options) { o.ID = "Bad_Name" }, want: []string{`ID "Bad_Name" is not a valid Lease name`}},
		{name: "bad namespace", modify: func(o *Options) { o.Namespace = "a.b" }, want: []string{`namespace "a.b" is invalid`}},
		{
			name:   "lease not above renew",
			modify: func(o *Options) { o.LeaseDuration = 10 * time.Second },
			want:   []string{"LeaseDuration 10s must be greater than RenewDeadline 10s"},
		},
		{
			name:   "renew not above jittered retry",
			modify: func(o *Options) { o.RetryPeriod = 9 * time.Second },
			want:   []string{"RenewDeadline 10s must be greater than 1.2*RetryPeriod (10.8s)"},
		},
		{
			name: "fractional lease above renew once rounded up",
			modify: func(o *Options) {
				o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 1900*time.Millisecond, 1500*time.Millisecond, 100*time.Millisecond
			},
		},
		{
			name: "fractional lease not above renew once rounded up",
			modify: func(o *Options) {
				o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 1100*time.Millisecond, 2*time.Second, 100*time.Millisecond
			},
			want: []string{"LeaseDuration 1.1s must be greater than RenewDeadline 2s"},
		},
		{
			// client-go's rule is on LeaseDuration as configured, though the
			// Lease stores 2s.
			name: "fractional lease below renew, written above it",
			modify: func(o *Options) {
				o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 1100*time.Millisecond, 1500*time.Millisecond, 100*time.Millisecond
			},
			want: []string{"LeaseDuration 1.1s must be greater than RenewDeadline 1.5s"},
		},
		{
			name:   "bad labels",
			modify: func(o *Options) { o.Labels = map[string]string{"ok": "yes", "bad key!": "x", "app": "bad value!"} },
			want:   []string{`label key "bad key!" is invalid`, `label app value "bad value!" is invalid`},
		},
		{
			// client-go accepts it; the Lease stores 1s.
			name: "sub-second lease",
			modify: func(o *Options) {
				o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 900*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond
			},
		},
		{
			name: "every problem at once",
			modify: func(o *Options) {
				o.ID, o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = "", -time.Second, -time.Second, -time.Second
			},
			want: []string{
				"ID (the Lease name) is required",
				"LeaseDuration -1s must be positive",
				"RenewDeadline -1s must be positive",
				"RetryPeriod -1s must be positive",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid
			tt.modify(&o)
			err := o.validate()
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "leaderelection: invalid options: "), err.Error())
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestInClusterNamespace(t *testing.T) {
	dir := t.TempDir()
	_, err := inClusterNamespace(filepath.Join(dir, "missing"))
	assert.EqualError(t, err, "leaderelection: Namespace is required when not running in a cluster")

	p := filepath.Join(dir, "namespace")
	require.NoError(t, os.WriteFile(p, []byte("operators\n"), 0o600))
	ns, err := inClusterNamespace(p)
	require.NoError(t, err)
	assert.Equal(t, "operators", ns)
}
