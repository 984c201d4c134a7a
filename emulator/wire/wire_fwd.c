/* SPDX-License-Identifier: MIT */
/*
 * Forwarding loop (see wire_fwd.h).
 *
 * CPU back-off.  A DPDK loop normally busy-polls a dedicated core.  Here
 * the wire shares two cores with the MPI ranks it serves, so a core
 * burnt on empty polls would slow the very workloads being measured.
 * For WIRE_LINGER_NS after the last frame moved the loop keeps polling
 * (a reply usually follows a request within tens of us, and so a ping's
 * reply is not charged a sleep that its request was not), then it
 * sleeps (nanosleep, timer slack set to 1 us by main) for at most
 * --idle-sleep, and never into the spin window before the next release
 * time; the window is spent polling, so releases keep busy-poll
 * accuracy while an idle wire costs a fraction of a core.  nanosleep
 * overshoots by a machine-dependent amount (a few us on bare metal,
 * 25-30 us in this project's VMs), so the window is not a constant: it
 * is twice the measured average overshoot plus 2 us, kept within
 * [WIRE_SPIN_MIN_NS, WIRE_SPIN_MAX_NS].
 * The price is pick-up latency: a frame arriving during a sleep waits
 * for it to end (on average half of --idle-sleep plus the wake-up
 * overshoot), the same with and without added delay, so it shifts
 * baseline and shaped RTTs alike.  --idle-sleep 0ns busy-polls, as on
 * a dedicated emulator node.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <lgp/clock.h>

#include "wire_fwd.h"

#define WIRE_LINGER_NS		100000ULL
#define WIRE_SPIN_MIN_NS	5000ULL
#define WIRE_SPIN_MAX_NS	200000ULL
#define WIRE_XSTATS_NS		100000000ULL

/*
 * Frames the port lost before the wire saw them.  Read by the lcore (a
 * syscall per port for af_packet) every WIRE_XSTATS_NS, so the counter
 * keeps its single writer.
 */
static void wire_fwd_rx_drops(struct wire_fwd *f)
{
	struct rte_eth_stats es;
	unsigned int p;

	for (p = 0; p < f->st->nports; p++)
		if (!rte_eth_stats_get(f->port_ids[p], &es))
			wire_stat_set(&f->st->ports[p].stats.drop_rx,
				      es.imissed + es.rx_nombuf);
}

int wire_fwd_init(struct wire_fwd *f, struct wire_state *st,
		  uint16_t *port_ids, uint64_t seed, int jitter_reorder,
		  uint64_t idle_sleep_ns, volatile sig_atomic_t *quit)
{
	unsigned int i;
	int rc;

	memset(f, 0, sizeof(*f));
	f->st = st;
	f->port_ids = port_ids;
	f->idle_sleep_ns = idle_sleep_ns;
	f->quit = quit;
	/*
	 * The EAL requires a constant-rate TSC; the clock measures its rate
	 * and checks it against DPDK's.  Any other outcome (no TSC to read,
	 * a clock already started) is a correct clock too, only slower.
	 */
	lgp_clock_init_tsc(rte_get_tsc_hz());
	f->overshoot_ns = WIRE_SPIN_MIN_NS;
	f->mac = malloc(sizeof(*f->mac));
	f->eg = calloc(st->nports, sizeof(*f->eg));
	if (!f->mac || !f->eg)
		goto err;
	wire_mac_init(f->mac);
	for (i = 0; i < st->nports; i++) {
		rc = wire_egress_init(&f->eg[i], st->ports[i].capacity,
				      st->nports, seed + i, jitter_reorder);
		if (rc)
			goto err;
		f->eg[i].pair_pkts = st->ports[i].pair_pkts;
		f->eg[i].pair_latency_ns = st->ports[i].pair_latency_ns;
	}
	return 0;
err:
	wire_fwd_fini(f);
	return -ENOMEM;
}

void wire_fwd_fini(struct wire_fwd *f)
{
	struct lgp_dq_slot ent;
	unsigned int i;

	if (f->eg)
		wire_fwd_rx_drops(f);
	for (i = 0; f->eg && i < f->st->nports; i++) {
		while (!lgp_dq_pop(&f->eg[i].line, &ent)) {
			wire_stat_add(&f->st->ports[i].stats.drop_tx, 1);
			rte_pktmbuf_free(ent.item);
		}
		wire_stat_set(&f->st->ports[i].stats.queue_pkts, 0);
		wire_stat_set(&f->st->ports[i].stats.queue_bytes, 0);
		wire_egress_fini(&f->eg[i]);
	}
	free(f->eg);
	free(f->mac);
	f->eg = NULL;
	f->mac = NULL;
}

static void wire_fwd_depth(struct wire_fwd *f, unsigned int e)
{
	struct wire_stats *s = &f->st->ports[e].stats;
	uint64_t n = lgp_dq_size(&f->eg[e].line);

	wire_stat_set(&s->queue_pkts, n);
	wire_stat_set(&s->queue_bytes, lgp_dq_bytes(&f->eg[e].line));
	if (n > s->queue_max)
		wire_stat_set(&s->queue_max, n);
}

/*
 * Shape m, which arrived on port p, for egress e; one reference of m is
 * consumed either way.
 */
static void wire_fwd_enqueue(struct wire_fwd *f, unsigned int p,
			     unsigned int e, struct rte_mbuf *m, uint64_t now)
{
	struct wire_stats *s = &f->st->ports[e].stats;
	const struct wire_shape *sh = wire_state_shape(&f->st->ports[e]);
	const struct wire_dist *d = wire_state_dist(f->st);
	const struct wire_pair *pair =
		wire_pairs_get(wire_state_pairs(f->st), p, e);
	uint64_t gen = d ? d->gen : 0;

	if (gen != f->eg[e].dist_gen) {	/* a new distribution: its stream */
		wire_egress_set_dist(&f->eg[e], d ? &d->dist : NULL, e, s);
		f->eg[e].dist_gen = gen;
	}
	switch (wire_egress_admit(&f->eg[e], sh, p, pair, now, m,
				  rte_pktmbuf_pkt_len(m), NULL)) {
	case WIRE_ADMIT:
		wire_fwd_depth(f, e);
		return;
	case WIRE_DROP_LOSS:
		wire_stat_add(&s->drop_loss, 1);
		break;
	case WIRE_DROP_QUEUE:
		wire_stat_add(&s->drop_queue, 1);
		break;
	}
	rte_pktmbuf_free(m);
}

static void wire_fwd_rx(struct wire_fwd *f, unsigned int p,
			struct rte_mbuf *m, uint64_t now)
{
	const struct rte_ether_hdr *eth;
	unsigned int n = f->st->nports, q;
	int dst;

	wire_stat_add(&f->st->ports[p].stats.rx_pkts, 1);
	wire_stat_add(&f->st->ports[p].stats.rx_bytes, rte_pktmbuf_pkt_len(m));
	if (f->st->mode == WIRE_MODE_PAIR) {
		wire_fwd_enqueue(f, p, p ^ 1, m, now);
		return;
	}
	if (rte_pktmbuf_data_len(m) < sizeof(*eth)) {
		rte_pktmbuf_free(m);
		return;
	}
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	wire_mac_learn(f->mac, eth->src_addr.addr_bytes, (uint16_t)p);
	dst = wire_mac_is_group(eth->dst_addr.addr_bytes) ? -1 :
	      wire_mac_lookup(f->mac, eth->dst_addr.addr_bytes);
	if (dst == (int)p || n < 2) {
		rte_pktmbuf_free(m);	/* stays on its own segment */
		return;
	}
	if (dst >= 0) {
		wire_fwd_enqueue(f, p, (unsigned int)dst, m, now);
		return;
	}
	/* Flood: the frame is never written, so every egress shares it. */
	rte_mbuf_refcnt_update(m, (int16_t)(n - 2));
	for (q = 0; q < n; q++)
		if (q != p)
			wire_fwd_enqueue(f, p, q, m, now);
}

/*
 * Send what is due on egress e; returns the number of frames sent.  now is
 * the round's time, read before any port sends: a packet's lateness is how
 * long after its release time the loop took it (the loop's pick-up delay:
 * a sleep's overshoot, a long round), not the cost of the send itself.
 */
static unsigned int wire_fwd_tx(struct wire_fwd *f, unsigned int e,
				uint64_t now)
{
	struct lgp_dq_slot ents[WIRE_BURST];
	struct rte_mbuf *pkts[WIRE_BURST];
	struct wire_egress *eg = &f->eg[e];
	struct wire_stats *s = &f->st->ports[e].stats;
	uint16_t n = 0, sent, i;

	while (n < WIRE_BURST && lgp_dq_next(&eg->line) <= now) {
		lgp_dq_pop(&eg->line, &ents[n]);
		pkts[n] = ents[n].item;
		n++;
	}
	if (!n)
		return 0;
	sent = rte_eth_tx_burst(f->port_ids[e], 0, pkts, n);
	for (i = 0; i < sent; i++)
		wire_stats_tx(s, &ents[i], now);
	/* TX ring full: keep the rest, in order, for the next round. */
	for (i = sent; i < n; i++)
		lgp_dq_requeue(&eg->line, &ents[i]);
	wire_fwd_depth(f, e);
	return sent;
}

static void wire_fwd_backoff(struct wire_fwd *f)
{
	uint64_t next = UINT64_MAX, now, wait, spin, slept;
	struct timespec ts;
	unsigned int e;

	if (!f->idle_sleep_ns)
		return;
	for (e = 0; e < f->st->nports; e++)
		if (lgp_dq_next(&f->eg[e].line) < next)
			next = lgp_dq_next(&f->eg[e].line);
	spin = 2 * f->overshoot_ns + 2000;
	spin = RTE_MAX(spin, WIRE_SPIN_MIN_NS);
	spin = RTE_MIN(spin, WIRE_SPIN_MAX_NS);
	now = lgp_now_ns();
	wait = f->idle_sleep_ns;
	if (next != UINT64_MAX) {
		if (next <= now + spin)
			return;
		wait = RTE_MIN(wait, next - now - spin);
	}
	ts.tv_sec = (time_t)(wait / NS_PER_S);
	ts.tv_nsec = (long)(wait % NS_PER_S);
	nanosleep(&ts, NULL);
	slept = lgp_now_ns() - now;
	/* average overshoot over the last ~8 sleeps */
	f->overshoot_ns = (7 * f->overshoot_ns +
			   (slept > wait ? slept - wait : 0)) / 8;
}

int wire_fwd_loop(void *arg)
{
	struct wire_fwd *f = arg;
	struct wire_state *st = f->st;
	struct rte_mbuf *pkts[WIRE_BURST];
	unsigned int p, work;
	uint64_t now, last_work = 0, last_xstats = 0;
	uint16_t n, i;

	atomic_store(&st->lcore_active, 1);
	while (!*f->quit) {
		work = 0;
		for (p = 0; p < st->nports; p++) {
			n = rte_eth_rx_burst(f->port_ids[p], 0, pkts,
					     WIRE_BURST);
			if (!n)
				continue;
			now = lgp_now_ns();
			for (i = 0; i < n; i++)
				wire_fwd_rx(f, p, pkts[i], now);
			work += n;
		}
		now = lgp_now_ns();
		for (p = 0; p < st->nports; p++)
			work += wire_fwd_tx(f, p, now);
		wire_state_quiescent(st);
		if (now - last_xstats > WIRE_XSTATS_NS) {
			wire_fwd_rx_drops(f);
			last_xstats = now;
		}
		if (work)
			last_work = now;
		else if (now - last_work > WIRE_LINGER_NS)
			wire_fwd_backoff(f);
	}
	atomic_store(&st->lcore_active, 0);
	return 0;
}
