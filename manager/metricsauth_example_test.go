package manager_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/manager"
)

// ExampleMetricsAuth caches the reviews of a metrics filter for shorter
// than the defaults, so that a revoked permission stops scraping within a
// minute. A stand-in for the API server counts the reviews: three scrapes
// with one token cost one of each.
func ExampleMetricsAuth() {
	reviews := map[string]int{}
	apiServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reviews[r.URL.Path]++ // the filter sends one review at a time here
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			var tr authenticationv1.TokenReview
			_ = json.NewDecoder(r.Body).Decode(&tr)
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: tr.Spec.Token == "good", User: authenticationv1.UserInfo{Username: "prometheus"}}
			_ = json.NewEncoder(w).Encode(tr)
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			var sar authorizationv1.SubjectAccessReview
			_ = json.NewDecoder(r.Body).Decode(&sar)
			sar.Status.Allowed = sar.Spec.User == "prometheus" && sar.Spec.NonResourceAttributes.Path == "/metrics"
			_ = json.NewEncoder(w).Encode(sar)
		}
	}))
	defer apiServer.Close()

	provider := manager.MetricsAuth(manager.MetricsAuthOptions{
		AllowedTTL: time.Minute, // a removed ClusterRoleBinding stops scraping within a minute
		DeniedTTL:  -1,          // a granted one starts at once
	})
	// In a manager: manager.Options{Metrics: manager.MetricsOptions{FilterProvider: provider, ...}}.
	// The stand-in speaks JSON only; a real API server speaks protobuf too.
	cfg := &rest.Config{Host: apiServer.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
	filter, err := provider(cfg, apiServer.Client())
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "metrics")
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, auth := range []string{"Bearer good", "bearer good", "Bearer good", "Bearer bad"} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(auth, rec.Code)
	}
	fmt.Println("token reviews:", reviews["/apis/authentication.k8s.io/v1/tokenreviews"])
	fmt.Println("access reviews:", reviews["/apis/authorization.k8s.io/v1/subjectaccessreviews"])

	_, err = manager.MetricsAuth(manager.MetricsAuthOptions{CacheSize: -1})(&rest.Config{}, http.DefaultClient)
	fmt.Println(err)
	// Output:
	// Bearer good 200
	// bearer good 200
	// Bearer good 200
	// Bearer bad 401
	// token reviews: 2
	// access reviews: 1
	// manager: MetricsAuthOptions.CacheSize -1 is negative
}
