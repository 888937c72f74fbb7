package auditlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample is a hand-written log: three completed manager writes to
// workloads (one refused with a conflict), one to clusterqueues/status, a
// RequestReceived entry and a read (neither counted), another user's write
// (filtered), a blank line and a line cut short.
const sample = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"1","stage":"ResponseComplete","requestURI":"/apis/kueue.x-k8s.io/v1beta2/namespaces/a/workloads/w/status?fieldManager=kueue-admission","verb":"patch","user":{"username":"kuota-manager","groups":["system:masters"]},"objectRef":{"resource":"workloads","namespace":"a","name":"w","apiGroup":"kueue.x-k8s.io","apiVersion":"v1beta2","subresource":"status"},"responseStatus":{"metadata":{},"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"2","stage":"ResponseComplete","verb":"patch","user":{"username":"kuota-manager"},"objectRef":{"resource":"workloads","namespace":"a","name":"w","subresource":"status"},"responseStatus":{"metadata":{},"status":"Failure","reason":"Conflict","code":409}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"3","stage":"ResponseComplete","verb":"update","user":{"username":"kuota-manager"},"objectRef":{"resource":"workloads","namespace":"a","name":"w"},"responseStatus":{"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"4","stage":"ResponseComplete","verb":"update","user":{"username":"kuota-manager"},"objectRef":{"resource":"clusterqueues","name":"cq","subresource":"status"},"responseStatus":{"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"5","stage":"RequestReceived","verb":"patch","user":{"username":"kuota-manager"},"objectRef":{"resource":"workloads","namespace":"a","name":"w","subresource":"status"}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"6","stage":"ResponseComplete","verb":"get","user":{"username":"kuota-manager"},"objectRef":{"resource":"workloads","namespace":"a","name":"w"},"responseStatus":{"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"7","stage":"ResponseComplete","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"workloads","namespace":"a"},"responseStatus":{"code":201}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"8","stage":"ResponseComplete","verb":"create","user":{"username":"kuota-manager"},"objectRef":{"resource":"events","namespace":"a"},"responseStatus":{"code":201}}

{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseCompl`

func TestParse(t *testing.T) {
	c, err := Parse(strings.NewReader(sample), "kuota-manager")
	if err != nil {
		t.Fatal(err)
	}
	if c.Writes != 5 || c.Failed != 1 || c.Malformed != 1 {
		t.Errorf("writes, failed, malformed = %d, %d, %d, want 5, 1, 1", c.Writes, c.Failed, c.Malformed)
	}
	wantVerb := map[string]int64{"patch": 2, "update": 2, "create": 1}
	for v, n := range wantVerb {
		if c.ByVerb[v] != n {
			t.Errorf("byVerb[%s] = %d, want %d", v, c.ByVerb[v], n)
		}
	}
	if len(c.ByVerb) != len(wantVerb) {
		t.Errorf("byVerb = %v, want %v", c.ByVerb, wantVerb)
	}
	st := c.ByResource["workloads/status"]
	if st == nil || st.Writes != 2 || st.Failed != 1 || st.ByVerb["patch"] != 2 {
		t.Errorf("workloads/status = %+v, want 2 patches, 1 failed", st)
	}
	if got := c.To("workloads", "workloads/status"); got != 3 {
		t.Errorf("writes to workloads = %d, want 3", got)
	}
	if got := c.To("clusterqueues/status"); got != 1 {
		t.Errorf("writes to clusterqueues/status = %d, want 1", got)
	}
	if got := c.To("missing"); got != 0 {
		t.Errorf("writes to a resource never written = %d, want 0", got)
	}
	want := []string{"workloads/status", "clusterqueues/status", "events", "workloads"}
	if got := c.Resources(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("resources = %v, want %v", got, want)
	}
}

func TestParseEveryUser(t *testing.T) {
	c, err := Parse(strings.NewReader(sample), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Writes != 6 || c.To("workloads") != 2 {
		t.Errorf("writes = %d, to workloads = %d, want 6 and 2", c.Writes, c.To("workloads"))
	}
}

func TestParseFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := ParseFile(path, "kuota-manager")
	if err != nil || c.Writes != 5 {
		t.Errorf("ParseFile = %v, %v, want 5 writes", c, err)
	}
	if _, err := ParseFile(filepath.Join(t.TempDir(), "none"), ""); err == nil {
		t.Error("ParseFile of a missing file succeeded")
	}
}
