package admission

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

func TestCreatePatch(t *testing.T) {
	tests := []struct {
		name string
		give [2]string // original, current
		want string    // the patch, as JSON
	}{
		{"equal", [2]string{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`}, `null`},
		{"numbers compare by value", [2]string{`{"a":1.0,"b":1e2}`, `{"a":1,"b":100}`}, `null`},
		{"add member", [2]string{`{"a":1}`, `{"a":1,"b":{"c":"x"}}`}, `[{"op":"add","path":"/b","value":{"c":"x"}}]`},
		{"remove member", [2]string{`{"a":1,"b":2}`, `{"a":1}`}, `[{"op":"remove","path":"/b"}]`},
		{"replace scalar", [2]string{`{"a":{"b":"x"}}`, `{"a":{"b":"y"}}`}, `[{"op":"replace","path":"/a/b","value":"y"}]`},
		{"replace with null", [2]string{`{"a":1}`, `{"a":null}`}, `[{"op":"replace","path":"/a","value":null}]`},
		{"type change", [2]string{`{"a":{"b":1}}`, `{"a":[1]}`}, `[{"op":"replace","path":"/a","value":[1]}]`},
		{"escaped keys", [2]string{`{"metadata":{}}`, `{"metadata":{"a/b~c":"v"}}`}, `[{"op":"add","path":"/metadata/a~1b~0c","value":"v"}]`},
		{"array grows", [2]string{`{"l":[1]}`, `{"l":[1,2,3]}`}, `[{"op":"add","path":"/l/1","value":2},{"op":"add","path":"/l/2","value":3}]`},
		{"array shrinks from the end", [2]string{`{"l":[1,2,3]}`, `{"l":[1]}`}, `[{"op":"remove","path":"/l/2"},{"op":"remove","path":"/l/1"}]`},
		{"array element changes", [2]string{`{"l":[{"n":"a"},{"n":"b"}]}`, `{"l":[{"n":"a"},{"n":"c","x":1}]}`}, `[{"op":"replace","path":"/l/1/n","value":"c"},{"op":"add","path":"/l/1/x","value":1}]`},
		{"sorted members", [2]string{`{"z":1,"a":1}`, `{"z":2,"a":2,"m":0}`}, `[{"op":"replace","path":"/a","value":2},{"op":"add","path":"/m","value":0},{"op":"replace","path":"/z","value":2}]`},
		{"big integers keep precision", [2]string{`{"a":9007199254740993}`, `{"a":9007199254740992}`}, `[{"op":"replace","path":"/a","value":9007199254740992}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := CreatePatch([]byte(tt.give[0]), []byte(tt.give[1]))
			require.NoError(t, err)
			got, err := json.Marshal(ops)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			if len(ops) == 0 {
				return
			}
			patch, err := jsonpatch.DecodePatch(got)
			require.NoError(t, err)
			applied, err := patch.Apply([]byte(tt.give[0]))
			require.NoError(t, err)
			assert.JSONEq(t, tt.give[1], string(applied), "the patch turns original into current")
		})
	}
}

func TestCreatePatchRejectsBadJSON(t *testing.T) {
	_, err := CreatePatch([]byte(`{`), []byte(`{}`))
	assert.ErrorContains(t, err, "original document")
	_, err = CreatePatch([]byte(`{}`), []byte(`{} {}`))
	assert.ErrorContains(t, err, "trailing data")
}

func TestDefaultingPatch(t *testing.T) {
	tests := []struct {
		name                    string
		received, before, after string
		want                    string
	}{
		{
			name:     "unknown field is not removed",
			received: `{"spec":{"a":1,"unknown":true}}`,
			before:   `{"spec":{"a":1}}`,
			after:    `{"spec":{"a":1,"b":2}}`,
			want:     `[{"op":"add","path":"/spec/b","value":2}]`,
		},
		{
			name:     "re-encoding differences are not sent",
			received: `{"metadata":{"name":"x"},"spec":{"cpu":"1000m"}}`,
			before:   `{"metadata":{"name":"x","creationTimestamp":null},"spec":{"cpu":"1"},"status":{}}`,
			after:    `{"metadata":{"name":"x","creationTimestamp":null},"spec":{"cpu":"1"},"status":{}}`,
			want:     `null`,
		},
		{
			name:     "a parent missing from the received object is added whole",
			received: `{"metadata":{"name":"x"}}`,
			before:   `{"metadata":{"name":"x"},"spec":{}}`,
			after:    `{"metadata":{"name":"x"},"spec":{"replicas":1}}`,
			want:     `[{"op":"add","path":"/spec","value":{"replicas":1}}]`,
		},
		{
			name:     "a field the defaulter removed is removed",
			received: `{"spec":{"a":1,"legacy":"x"}}`,
			before:   `{"spec":{"a":1,"legacy":"x"}}`,
			after:    `{"spec":{"a":1}}`,
			want:     `[{"op":"remove","path":"/spec/legacy"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := defaultingPatch([]byte(tt.received), []byte(tt.before), []byte(tt.after))
			require.NoError(t, err)
			got, err := json.Marshal(ops)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			if len(ops) > 0 {
				patch, err := jsonpatch.DecodePatch(got)
				require.NoError(t, err)
				_, err = patch.Apply([]byte(tt.received))
				assert.NoError(t, err, "the patch applies to the received object")
			}
		})
	}
}
