package config_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/config"
)

func TestControllerValidate(t *testing.T) {
	tests := []struct {
		name string
		give config.Controller
		want string
	}{
		{name: "zero", give: config.Controller{}},
		{name: "set", give: config.Controller{MaxConcurrentReconciles: 4, CacheSyncTimeout: time.Minute,
			ReconciliationTimeout: time.Second, GroupKindConcurrency: map[string]int{"ReplicaSet.apps": 2, "ConfigMap": 0}}},
		{name: "negative workers", give: config.Controller{MaxConcurrentReconciles: -1},
			want: "config: Controller.MaxConcurrentReconciles -1 is negative"},
		{name: "negative durations", give: config.Controller{CacheSyncTimeout: -time.Second, ReconciliationTimeout: -time.Minute},
			want: "config: Controller.CacheSyncTimeout -1s is negative\nconfig: Controller.ReconciliationTimeout -1m0s is negative"},
		{name: "bad group kinds", give: config.Controller{GroupKindConcurrency: map[string]int{"Deployment.apps": -2}},
			want: `config: Controller.GroupKindConcurrency["Deployment.apps"] -2 is negative`},
		{name: "empty key", give: config.Controller{GroupKindConcurrency: map[string]int{"": 2}},
			want: `config: Controller.GroupKindConcurrency has an empty key (want "Kind.group", or "Kind" for the core group)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.give.Validate()
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.want)
		})
	}
}

func ExampleController() {
	cfg := config.Controller{
		MaxConcurrentReconciles: 4,
		GroupKindConcurrency:    map[string]int{"Deployment.apps": 8},
		ReconciliationTimeout:   30 * time.Second,
	}
	fmt.Println(cfg.Validate())
	// Output:
	// <nil>
}
