package healthz

// Note is what a Checker returns to pass with a remark: the check counts
// as healthy, and its line in a listing reads "[+]name ok: remark". The
// manager's crd-sources check uses it to name the kinds its controllers
// wait for. A Note wrapped in another error (fmt.Errorf with %w) passes
// too.
type Note string

// Error returns the remark.
func (n Note) Error() string { return string(n) }
