package webhookapp_test

import (
	"context"
	"fmt"

	"github.com/kubeloop/kubeloop/examples/webhookapp"
)

// The App's rules, without a server.
func ExampleValidator() {
	app := &webhookapp.App{Spec: webhookapp.AppSpec{Replicas: 12}}
	app.Name = "web"
	_ = webhookapp.Defaulter{}.Default(context.Background(), app)
	_, err := webhookapp.Validator{}.ValidateCreate(context.Background(), app)
	fmt.Println(err)
	// Output:
	// App.webhookapp.kubeloop.dev "web" is invalid: [spec.image: Required value: an App needs an image, spec.replicas: Invalid value: 12: must be at most 10]
}
