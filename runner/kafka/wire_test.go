package kafka

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

func TestWireRoundTrips(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)
	root := ast.Seq(ast.Act("email.send", map[string]int{"n": 1}), ast.Act("log", "x"))
	m, err := submitMessage("order-7", 0xab, at, root)
	if err != nil {
		t.Fatal(err)
	}
	in, err := decodeInbound(m.Key, m.Value)
	if err != nil {
		t.Fatal(err)
	}
	if in.kind != typeSubmit || in.id != "order-7" || in.inc != 0xab || !in.started.Equal(at) || !ast.Equal(in.workflow, root) {
		t.Errorf("submit read back as %+v", in)
	}

	for _, r := range []job.Result{
		{JobID: "j", ActionID: "seq[0]#1", Output: []byte(`{"ok":true}`), At: at, Worker: "w-1"},
		{JobID: "j", ActionID: "seq[0]#2", Output: []byte("not json \x00"), Error: "", At: at},
		{JobID: "j", ActionID: "root#1", Error: "boom", Kind: "card_declined", Final: true},
		{JobID: "j", ActionID: "root@retry#2", At: at},
	} {
		m := resultMessage(r, 5)
		in, err := decodeInbound(m.Key, m.Value)
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		if in.kind != typeResult || !in.hasInc || in.inc != 5 || !reflect.DeepEqual(in.result, r) {
			t.Errorf("result %+v read back as %+v", r, in.result)
		}
	}
	c := cancelMessage("j", "changed my mind", time.Time{})
	if in, err := decodeInbound(c.Key, c.Value); err != nil || !reflect.DeepEqual(in.result, job.CancelResult("j", "changed my mind")) {
		t.Errorf("cancel read back as %+v, %v", in.result, err)
	}
	at = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	c = cancelMessage("j", "later", at)
	want := job.CancelResult("j", "later")
	want.At = at
	if in, err := decodeInbound(c.Key, c.Value); err != nil || !reflect.DeepEqual(in.result, want) {
		t.Errorf("stamped cancel read back as %+v, %v", in.result, err)
	}
	cn := job.CancelNodeResult("j", "slow", "too slow")
	cn.At = at
	c = cancelNodeMessage(cn, "slow")
	if in, err := decodeInbound(c.Key, c.Value); err != nil || in.kind != typeCancel || !reflect.DeepEqual(in.result, cn) {
		t.Errorf("node cancel read back as %+v, %v", in.result, err)
	}
	for _, sg := range []job.Signal{
		{Name: "approval", ID: "a/1 é", Payload: []byte(`{"ok":true}`), At: at},
		{Name: "go", ID: "x"},
	} {
		m := signalMessage("j", sg)
		if in, err := decodeInbound(m.Key, m.Value); err != nil || in.kind != typeSignal || !reflect.DeepEqual(in.result, job.SignalResult("j", sg)) {
			t.Errorf("signal %+v read back as %+v, %v", sg, in.result, err)
		}
	}
	for _, inc := range []uint64{0, 7} {
		d := deleteMessage("j", inc)
		if in, err := decodeInbound(d.Key, d.Value); err != nil || in.kind != typeDelete || in.id != "j" || in.inc != inc {
			t.Errorf("delete of incarnation %d read back as %+v, %v", inc, in, err)
		}
	}

	a := job.Action{JobID: "j", Incarnation: 9, ID: "seq[1].par[0]#2", Name: "charge", Payload: []byte(`{"amount":5}`),
		Attempt: 2, Inputs: []job.Input{{Name: "a", Output: []byte(`"x"`)}, {Name: "b", Output: []byte("raw\x01")}, {Name: "c"}},
		Timeout: 1500 * time.Millisecond, AtMostOnce: true, Priority: -3,
		Failure: &job.Failure{Path: "seq[0]", Action: "pay", Message: "no", Kind: "k", Others: 2}}
	am := actionMessage("p.action.charge", a)
	if string(am.Key) != "j/seq[1].par[0]#2" {
		t.Errorf("action key %q", am.Key)
	}
	out, err := decodeOutbound(am.Key, am.Value)
	if err != nil {
		t.Fatal(err)
	}
	if out.claimed || !reflect.DeepEqual(out.a, a) {
		t.Errorf("action read back as\n%+v\nwant\n%+v", out.a, a)
	}
	cm := claimedMessage("p.action.charge", a, 42, "w1")
	if out, err := decodeOutbound(cm.Key, cm.Value); err != nil || !out.claimed || out.offset != 42 || out.a.Key() != a.Key() || out.a.Incarnation != 9 {
		t.Errorf("claim read back as %+v, %v", out, err)
	}
	sm := stopMessage("j", 9, []string{"par[0]#1"})
	if id, inc, acts, err := decodeStop(sm.Key, sm.Value); err != nil || id != "j" || inc != 9 || len(acts) != 1 {
		t.Errorf("stop read back as %s %d %v %v", id, inc, acts, err)
	}
}

func TestWireMalformed(t *testing.T) {
	for _, c := range []struct{ key, value, want string }{
		{"j", `not json`, "not a baton message"},
		{"j", `{"v":2,"type":"result","action":"root#1"}`, "format 2"},
		{"j", `{"v":1,"type":"bogus"}`, "unknown message type"},
		{"j", `{"v":1,"type":"result","action":"nohash"}`, "result"},
		{"j", `{"v":1,"type":"result","action":"root#1","extra":1}`, "unknown field"},
		{"has space", `{"v":1,"type":"cancel","reason":"x"}`, "key"},
		{"", `{"v":1,"type":"cancel","reason":"x"}`, "key"},
		{"j", `{"v":1,"type":"cancel"}`, "no reason"},
		{"j", `{"v":1,"type":"cancel","reason":"x","node":"no good"}`, "cancel: node"},
		{"j", `{"v":1,"type":"signal","name":"no good","id":"x"}`, "signal"},
		{"j", `{"v":1,"type":"signal","name":"ok","id":""}`, "ID"},
		{"j", `{"v":1,"type":"signal","name":"ok","id":"x","payload":"` + strings.Repeat("x", job.MaxSignalPayload) + `"}`, "over the limit of 65536"},
		{"j", `{"v":1,"type":"submit","incarnation":"00000000000000ab","started":"2026-01-01T00:00:00Z","workflow":{"version":1,"root":{"act":""}}}`, "workflow"},
		{"j", `{"v":1,"type":"submit","incarnation":"xyz","started":"2026-01-01T00:00:00Z"}`, "incarnation"},
	} {
		_, err := decodeInbound([]byte(c.key), []byte(c.value))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("key %q value %s: err %v, want one saying %q", c.key, c.value, err, c.want)
		}
	}
	for _, c := range []struct{ key, value string }{
		{"j/root#1", `{}`},
		{"j/root#1", `{"v":1,"type":"action","job":"j","incarnation":"0000000000000001","id":"root#1","name":"bad name!","attempt":1}`},
		{"other/root#1", `{"v":1,"type":"action","job":"j","incarnation":"0000000000000001","id":"root#1","name":"x","attempt":1}`},
		{"j/root#1", `{"v":1,"type":"action","job":"j","incarnation":"0000000000000001","id":"root#1","name":"x","attempt":0}`},
	} {
		if _, err := decodeOutbound([]byte(c.key), []byte(c.value)); err == nil {
			t.Errorf("action %q %s decoded without an error", c.key, c.value)
		}
	}
}

func TestStateKeys(t *testing.T) {
	for _, k := range []string{stepKey("a.b", 7, 0xfe), chunkKey("a.b", 1, 3, 2), headKey("a.b"), claimKey(3, 9)} {
		if _, err := parseStateKey(k); err != nil {
			t.Errorf("%q: %v", k, err)
		}
	}
	for _, k := range []string{"a/s/7/00000000000000fe", "a/x/00000000000000000007/00000000000000fe", "/claim/x/1", "a b"} {
		if _, err := parseStateKey(k); err == nil {
			t.Errorf("%q parsed", k)
		}
	}
	// A job's records share the job's partition, whatever follows the ID.
	for _, id := range []job.ID{"a", "order-77", "x.y_z"} {
		p := partitionOf(id, 12)
		for _, k := range []string{stepKey(id, 2, 1), chunkKey(id, 1, 1, 0), headKey(id)} {
			if got := (jobBalancer{}).Balance(kafka.Message{Key: []byte(k)}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11); got != p {
				t.Errorf("%q goes to partition %d, job %s to %d", k, got, id, p)
			}
		}
	}
}
