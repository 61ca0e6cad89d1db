package serving

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// BodyError is a request that cannot be served, with the HTTP status to
// answer it with.
type BodyError struct {
	// Status is 400 (bad content type, empty or unreadable body), 405
	// (not a POST) or 413 (body too large).
	Status int
	// Err says what is wrong.
	Err error
}

func (e *BodyError) Error() string { return e.Err.Error() }
func (e *BodyError) Unwrap() error { return e.Err }

// ReadBody reads the JSON body of a POST request, at most limit bytes.
// The error is a *BodyError: 405 for another method, 400 for a missing or
// non-JSON content type, an empty or unreadable body, 413 for a body over
// limit.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.Method != http.MethodPost {
		return nil, &BodyError{http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed, want POST", r.Method)}
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return nil, &BodyError{http.StatusBadRequest, fmt.Errorf("content type %q not allowed, want application/json", ct)}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, &BodyError{http.StatusBadRequest, errors.New("empty request body")}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, &BodyError{http.StatusRequestEntityTooLarge, fmt.Errorf("request body larger than %d bytes", mbe.Limit)}
		}
		return nil, &BodyError{http.StatusBadRequest, fmt.Errorf("read request body: %w", err)}
	}
	if len(body) == 0 {
		return nil, &BodyError{http.StatusBadRequest, errors.New("empty request body")}
	}
	return body, nil
}

// Decode reads the JSON body of a POST request (ReadBody) into review, a
// pointer to the review type named kind in errors ("AdmissionReview",
// "ConversionReview"). The error is a *BodyError: ReadBody's, or 400 when
// the body is not JSON of that shape.
func Decode(w http.ResponseWriter, r *http.Request, limit int64, kind string, review any) error {
	body, err := ReadBody(w, r, limit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, review); err != nil {
		return &BodyError{http.StatusBadRequest, fmt.Errorf("decode %s: %w", kind, err)}
	}
	return nil
}

// Status returns the HTTP status of an error from ReadBody or Decode: the
// *BodyError's, or 400.
func Status(err error) int {
	if be := (*BodyError)(nil); errors.As(err, &be) {
		return be.Status
	}
	return http.StatusBadRequest
}

// WriteJSON writes v as JSON with the given status. An encoding failure is
// answered with a plain 500, and never calls back into the handler.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}
