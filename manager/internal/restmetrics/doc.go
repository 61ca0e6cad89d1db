// Package restmetrics measures the requests of a rest.Config into
// client-go's REST client metrics on a registry the caller owns, instead
// of through client-go's process-wide metrics hooks (which one manager per
// process could not share with another).
//
// Guarantees:
//   - rest_client_requests_total{code,method,host} counts every request
//     sent through the config, "<error>" as the code of one that got no
//     response; rest_client_request_duration_seconds{verb,host} times it
//     until the response headers arrived, in client-go's buckets.
//   - rest_client_rate_limiter_duration_seconds{host} observes every wait
//     for the config's RateLimiter, one ended by its context too. Every
//     client built from the config shares that limiter. A config with only
//     QPS has none to wrap (client-go builds one per REST client).
//   - The transport underneath stays reachable (utilnet's
//     RoundTripperWrapper), so closing idle connections works.
//   - The histograms are native too when the registerer asks for it
//     (internal/metrics.WithNativeHistograms).
package restmetrics
