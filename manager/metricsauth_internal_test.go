package manager

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetricsAuthOptions(t *testing.T) {
	o := MetricsAuthOptions{DeniedTTL: -1}.withDefaults()
	assert.Equal(t, MetricsAuthOptions{
		AuthenticatedTTL: time.Minute, UnauthenticatedTTL: 10 * time.Second,
		AllowedTTL: 5 * time.Minute, DeniedTTL: -1, CacheSize: 1024, ReviewTimeout: 10 * time.Second,
	}, o)
	err := MetricsAuthOptions{CacheSize: -1, ReviewTimeout: -time.Second}.validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CacheSize -1 is negative")
	assert.Contains(t, err.Error(), "ReviewTimeout -1s is negative")
	_, err = MetricsAuth(MetricsAuthOptions{CacheSize: -1})(nil, nil)
	assert.ErrorContains(t, err, "CacheSize")
}
