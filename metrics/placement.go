package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/batonwf/baton/runner"
)

// placementMetrics are the metrics of a worker's placement, fed by the
// Placement hook (runner.PlacementEvent): what runner/zk counts in its
// Stats, and the events runner/kafka has of them.
type placementMetrics struct {
	claims      *prometheus.CounterVec // outcome: claimed, in_transition, lost
	spills      *prometheus.CounterVec // action
	pins        prometheus.Counter
	pinMoves    prometheus.Counter
	renewals    prometheus.Counter
	broken      prometheus.Counter
	quarantines *prometheus.CounterVec // action
	wedged      prometheus.Counter
	draining    prometheus.Gauge
	unreadable  prometheus.Counter
}

// Outcomes of a claim (the outcome label of baton_claims_total).
const (
	claimClaimed      = "claimed"
	claimInTransition = "in_transition"
	claimLost         = "lost"
)

func newPlacementMetrics() placementMetrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	return placementMetrics{
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_claims_total",
			Help: "Actions this worker claimed, by outcome: claimed (from the queue, a request of its own), in_transition (by the transition that made them), lost (another worker claimed first)."}, []string{"outcome"}),
		spills: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_spills_total",
			Help: "Soft-key actions this worker claimed while their holder, another worker, was busy past the key's wait, by action name."}, []string{"action"}),
		pins:     counter("baton_pins_allocated_total", "Pins this worker's claims allocated to it, moves included."),
		pinMoves: counter("baton_pin_moves_total", "Pins this worker's claims moved to it from another worker."),
		renewals: counter("baton_lease_renewals_total", "Renewals of this worker's claims' leases (a write each)."),
		broken:   counter("baton_leases_broken_total", "Claims of other workers this worker broke because their leases expired."),
		quarantines: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_quarantines_total",
			Help: "Quarantines this worker put itself in, by action name."}, []string{"action"}),
		wedged:     counter("baton_worker_wedged_total", "Times this worker left its group for making no progress for a claim lease (Kafka)."),
		draining:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "baton_worker_draining", Help: "1 while this worker is draining, else 0."}),
		unreadable: counter("baton_placement_unreadable_total", "Placement records this worker found garbled and skipped: registrations, live nodes, settings, quarantines (ZooKeeper); control records, members' user data (Kafka)."),
	}
}

func (p *placementMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{p.claims, p.spills, p.pins, p.pinMoves, p.renewals, p.broken, p.quarantines, p.wedged, p.draining, p.unreadable}
}

// init makes the series known up front, at zero.
func (p *placementMetrics) init() {
	for _, o := range []string{claimClaimed, claimInTransition, claimLost} {
		p.claims.WithLabelValues(o)
	}
}

// initAction makes the series of action label name, at zero.
func (p *placementMetrics) initAction(name string) {
	p.spills.WithLabelValues(name)
	p.quarantines.WithLabelValues(name)
}

// placed moves the metric of e.
func (m *Metrics) placed(e runner.PlacementEvent) {
	p := &m.place
	switch e.Kind {
	case runner.PlacementClaimed:
		p.claims.WithLabelValues(claimClaimed).Inc()
	case runner.PlacementClaimedInTransition:
		p.claims.WithLabelValues(claimInTransition).Inc()
	case runner.PlacementClaimLost:
		p.claims.WithLabelValues(claimLost).Inc()
	case runner.PlacementSpilled:
		p.spills.WithLabelValues(m.actionLabel(e.Action)).Inc()
	case runner.PlacementPinAllocated:
		p.pins.Inc()
	case runner.PlacementPinMoved:
		p.pinMoves.Inc()
	case runner.PlacementLeaseRenewed:
		p.renewals.Inc()
	case runner.PlacementLeaseBroken:
		p.broken.Inc()
	case runner.PlacementQuarantined:
		p.quarantines.WithLabelValues(m.actionLabel(e.Action)).Inc()
	case runner.PlacementWedged:
		p.wedged.Inc()
	case runner.PlacementDraining:
		p.draining.Set(1)
	case runner.PlacementUndrained:
		p.draining.Set(0)
	case runner.PlacementUnreadable:
		p.unreadable.Inc()
	}
	// A kind a later runner package adds moves nothing here.
}
