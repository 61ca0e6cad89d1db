package lease_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/lease"
)

func TestValidate(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	tests := []struct {
		name                string
		lease, renew, retry time.Duration
		want                []string // substrings; none: valid
	}{
		{name: "defaults", lease: 15 * s, renew: 10 * s, retry: 2 * s},
		{name: "fractional lease above renew", lease: 1900 * ms, renew: 1500 * ms, retry: 200 * ms},
		{name: "sub-second lease is written as 1s", lease: 900 * ms, renew: 500 * ms, retry: 100 * ms},
		{name: "lease equal to renew", lease: 10 * s, renew: 10 * s, retry: 2 * s,
			want: []string{"LeaseDuration 10s must be greater than RenewDeadline 10s"}},
		{name: "fractional lease below renew even though written above it", lease: 1100 * ms, renew: 1500 * ms, retry: 100 * ms,
			want: []string{"LeaseDuration 1.1s must be greater than RenewDeadline 1.5s"}},
		{name: "renew not above jittered retry", lease: 15 * s, renew: 10 * s, retry: 9 * s,
			want: []string{"RenewDeadline 10s must be greater than 1.2*RetryPeriod (10.8s)"}},
		{name: "renew just above jittered retry", lease: 15 * s, renew: 2401 * ms, retry: 2 * s},
		{name: "renew exactly jittered retry", lease: 15 * s, renew: 2400 * ms, retry: 2 * s,
			want: []string{"RenewDeadline 2.4s must be greater than 1.2*RetryPeriod (2.4s)"}},
		{name: "too long for int32 seconds", lease: (1 << 31) * s, renew: 10 * s, retry: 2 * s,
			want: []string{"must fit leaseDurationSeconds"}},
		{name: "every problem at once", lease: -s, renew: 0, retry: -s,
			want: []string{"LeaseDuration -1s must be positive", "RenewDeadline 0s must be positive", "RetryPeriod -1s must be positive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := lease.Validate(tt.lease, tt.renew, tt.retry)
			if len(tt.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Len(t, strings.Split(err.Error(), "\n"), len(tt.want), "one line per problem: %q", err)
		})
	}
}

func TestWrittenDuration(t *testing.T) {
	const s, ms = time.Second, time.Millisecond
	tests := []struct{ give, want time.Duration }{
		{give: 0, want: 0},
		{give: -s, want: 0},
		{give: time.Nanosecond, want: s},
		{give: 900 * ms, want: s},
		{give: s, want: s},
		{give: 1001 * ms, want: 2 * s},
		{give: 1900 * ms, want: 2 * s},
		{give: 15 * s, want: 15 * s},
		{give: 15*s + time.Nanosecond, want: 16 * s},
		{give: 1 << 62, want: (1<<31 - 1) * s},
	}
	for _, tt := range tests {
		t.Run(tt.give.String(), func(t *testing.T) {
			assert.Equal(t, tt.want, lease.WrittenDuration(tt.give))
			assert.GreaterOrEqual(t, lease.WrittenDuration(tt.give), min(tt.give, (1<<31-1)*s), "never less than asked")
		})
	}
}

func TestRecordRoundTrip(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 123456789, time.UTC)
	r := lease.Record{Holder: "a", Duration: 1900 * time.Millisecond, AcquireTime: at, RenewTime: at.Add(time.Second), Transitions: 3}
	spec := r.Spec()
	assert.EqualValues(t, 2, *spec.LeaseDurationSeconds, "1.9s is written as 2s")
	back := lease.RecordOf(spec)
	assert.Equal(t, 2*time.Second, back.Duration)
	back.Duration = r.Duration
	assert.True(t, back.Equal(r))
	assert.False(t, back.Equal(lease.Record{Holder: "a"}))
	assert.Equal(t, lease.Record{}, lease.RecordOf(lease.Record{}.Spec()), "the empty record")
}
