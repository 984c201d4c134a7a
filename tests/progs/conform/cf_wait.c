/* SPDX-License-Identifier: MIT */
/*
 * Waiting for completions: poll sets, a CQ's wait fd under fi_trywait and
 * epoll, wait sets, fi_cq_sread and fi_cntr_wait.  Beneath active knobs a
 * send's local completion is the shim's own, synthesised when the message
 * has left; each way of waiting must report it as the provider reports
 * its own, and must not report what is not there.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "conform.h"

/*
 * A burst: paced by the gap, its completions fall due one after another,
 * the last ones after the case has read the first (with the gap beneath
 * the shim larger than a send call's cost).
 */
#define CF_BURST	64
#define CF_MSG_LEN	64
_Static_assert(CF_BURST * CF_MSG_LEN <= CF_BUF_LEN, "a burst fits a buffer");
/* One sleep of a wait loop. */
#define CF_SLEEP_MS	1000
/* Waits that must expire: their timeout, how early and late they may end. */
#define CF_SHORT_MS	50
#define CF_EARLY_NS	(40ULL * 1000000ULL)
#define CF_LATE_NS	(2ULL * 1000000000ULL)
/* Waits that must be met. */
#define CF_LONG_MS	5000
/* How long a poll set must stay silent when nothing is new. */
#define CF_QUIET_NS	(20ULL * 1000000ULL)

static const struct cf_pair_attr cf_rdm = { .type = FI_EP_RDM };
static const struct cf_pair_attr cf_msg = { .type = FI_EP_MSG };

static bool cf_unsupported(int ret)
{
	return ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP;
}

static unsigned long long cf_ms(uint64_t ns)
{
	return (unsigned long long) (ns / 1000000ULL);
}

/*
 * A wait with a timeout that may never return: libfabric 1.17's
 * FI_WAIT_YIELD (shm's FI_WAIT_UNSPEC) spins until something comes,
 * whatever the timeout.  It is tried on a thread of its own against an
 * idle object and, if it outlives CF_LATE_NS, kicked free and the case
 * skipped, rather than hanging the case on the provider's defect.
 */
struct cf_timed {
	struct fid_cq *cq;		/* fi_cq_sread on this, or */
	struct fid_cntr *cntr;		/* fi_cntr_wait on this */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

static void *cf_timed_main(void *arg)
{
	struct cf_timed *t = arg;
	struct fi_cq_data_entry e;

	if (t->cq)
		fi_cq_sread(t->cq, &e, 1, NULL, CF_SHORT_MS);
	else
		fi_cntr_wait(t->cntr, 1, CF_SHORT_MS);
	pthread_mutex_lock(&t->lock);
	t->done = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static int cf_timed_probe(struct cf_timed *t, const char *prov)
{
	const char *call = t->cq ? "fi_cq_sread" : "fi_cntr_wait";
	struct timespec ts;
	pthread_t thread;
	bool done;
	int ret;

	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	t->done = false;
	ret = pthread_create(&thread, NULL, cf_timed_main, t);
	CF_CHECK(!ret, "pthread_create: %s", strerror(ret));
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t) (CF_LATE_NS / 1000000000ULL);
	pthread_mutex_lock(&t->lock);
	while (!t->done && !ret)
		ret = pthread_cond_timedwait(&t->cond, &t->lock, &ts);
	done = t->done;
	pthread_mutex_unlock(&t->lock);
	if (!done) {
		/* What a waiter wakes on, so the object can be closed. */
		if (t->cq)
			fi_cq_signal(t->cq);
		else
			fi_cntr_add(t->cntr, 1);
	}
	pthread_join(thread, NULL);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	if (!done)
		return cf_skip("%s: %s(%d ms) on an idle object did not return "
			       "within %llu s: the provider's wait ignores its "
			       "timeout", prov, call, CF_SHORT_MS,
			       CF_LATE_NS / 1000000000ULL);
	return 0;
}

/*
 * Skips unless the domain opens CQs waiting as p->attr says and, if
 * timed, their fi_cq_sread keeps its timeout.
 */
static int cf_cq_probe(struct cf_pair *p, const char *prov, const char *obj,
		       bool timed)
{
	struct fi_cq_attr cq_attr = {
		.format = p->attr.format,
		.wait_obj = p->attr.wait_obj,
		.wait_set = p->attr.wait_set,
		.size = 128,
	};
	struct cf_timed t = { 0 };
	int ret;

	ret = fi_cq_open(p->domain, &cq_attr, &t.cq, NULL);
	if (cf_unsupported(ret))
		return cf_skip("%s CQs cannot wait on %s: %s", prov, obj,
			       fi_strerror(-ret));
	CF_OK(ret);
	if (timed && (ret = cf_timed_probe(&t, prov)))
		return ret;
	CF_OK(fi_close(&t.cq->fid));
	return 0;
}

/*
 * cf_pair_open for CQs with a wait object, which it would fail to open
 * where the provider has none: tried on a domain of its own first.
 */
static int cf_wait_pair_open(struct cf_pair *p, const char *prov,
			     const struct cf_pair_attr *attr, const char *obj,
			     bool timed)
{
	int ret;

	if ((ret = cf_pair_domain(p, prov, attr)) ||
	    (ret = cf_cq_probe(p, prov, obj, timed)) ||
	    (ret = cf_pair_close(p)))
		return ret;
	return cf_pair_open(p, prov, attr);
}

/*
 * One message a to b, waited for by polling both sides: rxm connects and
 * rxd shakes hands on first contact, which takes both sides' progress; a
 * blocking call on one side does not give the other's.
 */
static int cf_warm_up(struct cf_pair *p)
{
	struct fi_context2 tx, rx;
	int ret;

	CF_OK(fi_recv(p->b.ep, p->b.buf, CF_MSG_LEN, p->b.desc, p->b.peer, &rx));
	CF_POST(p, fi_send(p->a.ep, p->a.buf, CF_MSG_LEN, p->a.desc, p->a.peer,
			   &tx));
	if ((ret = cf_cq_wait(p, p->a.cq, NULL, "warm-up send completion")) ||
	    (ret = cf_cq_wait(p, p->b.cq, NULL, "warm-up receive completion")))
		return ret;
	return 0;
}

/* A completion of flag whose context is one of ctx[0..n). */
static int cf_entry_check(const struct fi_cq_data_entry *e,
			  const struct fi_context2 *ctx, int n, uint64_t flag,
			  const char *what)
{
	const struct fi_context2 *c = e->op_context;

	CF_CHECK(c >= ctx && c < ctx + n, "%s: completion context %p is not "
		 "one of the operations'", what, e->op_context);
	CF_CHECK(e->flags & flag, "%s: completion flags 0x%llx lack %s", what,
		 (unsigned long long) e->flags,
		 flag == FI_SEND ? "FI_SEND" : "FI_RECV");
	return 0;
}

/* The error entry behind -FI_EAVAIL, as a failure. */
static int cf_cq_error(struct fid_cq *cq, const char *what)
{
	struct fi_cq_err_entry err;

	memset(&err, 0, sizeof(err));
	fi_cq_readerr(cq, &err, 0);
	return cf_why("%s: error completion: %s", what, fi_strerror(err.err));
}

/* ---- poll sets ------------------------------------------------------- */

static int cf_poll_open(struct cf_pair *p, const char *prov,
			struct fid_poll **ps)
{
	struct fi_poll_attr attr = { 0 };
	int ret;

	ret = fi_poll_open(p->domain, &attr, ps);
	if (cf_unsupported(ret))
		return cf_skip("%s: fi_poll_open: %s", prov, fi_strerror(-ret));
	CF_OK(ret);
	return 0;
}

/*
 * Nothing new has happened: fi_poll reports no member for CF_QUIET_NS,
 * neither before any traffic nor once the application has read what
 * came (the shim's own completions of its deferred posts are not news).
 */
static int cf_poll_quiet(struct fid_poll *ps, const char *when)
{
	uint64_t deadline = cf_now_ns() + CF_QUIET_NS;
	void *ctx[4];
	int got;

	do {
		got = fi_poll(ps, ctx, 4);
		CF_CHECK(got == 0 || got == -FI_EAGAIN, "fi_poll %s returned "
			 "%d%s%s", when, got, got < 0 ? ": " : " contexts",
			 got < 0 ? fi_strerror(-got) : "");
		sched_yield();
	} while (cf_now_ns() < deadline);
	return 0;
}

/*
 * Polls until fi_poll has reported each of the n members, whose contexts
 * are want[] and which all must have something; within CF_WAIT_NS.
 */
static int cf_poll_all(struct fid_poll *ps, void *const *want,
		       const char *const *names, int n)
{
	uint64_t deadline = cf_now_ns() + CF_WAIT_NS;
	bool seen[4] = { false };
	int left = n, got, i, j;
	void *ctx[4];

	while (left) {
		got = fi_poll(ps, ctx, 4);
		CF_CHECK(got >= 0 || got == -FI_EAGAIN, "fi_poll: %s",
			 fi_strerror(-got));
		for (i = 0; i < got; i++) {
			for (j = 0; j < n && ctx[i] != want[j]; j++)
				;
			CF_CHECK(j < n, "fi_poll reported context %p, no "
				 "member's", ctx[i]);
			if (!seen[j]) {
				seen[j] = true;
				left--;
			}
		}
		for (j = 0; j < n && seen[j]; j++)
			;
		CF_CHECK(!left || cf_now_ns() < deadline, "fi_poll did not "
			 "report %s within %llu s", names[j],
			 CF_WAIT_NS / 1000000000ULL);
		sched_yield();
	}
	return 0;
}

/* The member fi_poll reported has its completion ready to read. */
static int cf_read_now(struct fid_cq *cq, const struct fi_context2 *ctx,
		       uint64_t flag, const char *what)
{
	struct fi_cq_data_entry e;
	ssize_t n = fi_cq_read(cq, &e, 1);

	if (n == -FI_EAVAIL)
		return cf_cq_error(cq, what);
	CF_CHECK(n == 1, "%s: reported by fi_poll, but fi_cq_read: %s", what,
		 fi_strerror((int) -n));
	return cf_entry_check(&e, ctx, 1, flag, what);
}

static int cf_poll_cq_send(const char *prov, const struct cf_pair_attr *attr)
{
	static const char *const names[] = {
		"a.cq's send completion", "b.cq's receive completion",
	};
	struct fi_context2 tx, rx;
	struct fid_poll *ps;
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, attr)) ||
	    (ret = cf_poll_open(&p, prov, &ps)))
		return ret;
	CF_OK(fi_poll_add(ps, &p.a.cq->fid, 0));
	CF_OK(fi_poll_add(ps, &p.b.cq->fid, 0));
	if ((ret = cf_poll_quiet(ps, "before any traffic")))
		return ret;
	CF_OK(fi_recv(p.b.ep, p.b.buf, CF_MSG_LEN, p.b.desc, p.b.peer, &rx));
	cf_fill(p.a.buf, CF_MSG_LEN, 1);
	CF_POST(&p, fi_send(p.a.ep, p.a.buf, CF_MSG_LEN, p.a.desc, p.a.peer,
			    &tx));
	/* The CQs' contexts are their sides (cf_side_open). */
	if ((ret = cf_poll_all(ps, (void *[]) { &p.a, &p.b }, names, 2)) ||
	    (ret = cf_read_now(p.a.cq, &tx, FI_SEND, names[0])) ||
	    (ret = cf_read_now(p.b.cq, &rx, FI_RECV, names[1])) ||
	    (ret = cf_poll_quiet(ps, "after the completions were read")))
		return ret;
	CF_CHECK(cf_check(p.b.buf, CF_MSG_LEN, 1), "received bytes differ");
	CF_OK(fi_poll_del(ps, &p.a.cq->fid, 0));
	CF_OK(fi_poll_del(ps, &p.b.cq->fid, 0));
	CF_OK(fi_close(&ps->fid));
	return cf_pair_close(&p);
}

static int cf_case_poll_cq_send(const char *prov)
{
	return cf_poll_cq_send(prov, &cf_rdm);
}

static int cf_case_poll_cq_send_msg(const char *prov)
{
	return cf_poll_cq_send(prov, &cf_msg);
}

static int cf_poll_cntr(const char *prov, const struct cf_pair_attr *base)
{
	static const char *const names[] = { "a.tx_cntr", "b.rx_cntr" };
	struct cf_pair_attr attr = *base;
	struct fi_context2 tx, rx;
	struct fid_poll *ps;
	struct cf_pair p;
	uint64_t tx_n, rx_n;
	int ret;

	attr.cntrs = true;
	if ((ret = cf_pair_open(&p, prov, &attr)) ||
	    (ret = cf_poll_open(&p, prov, &ps)))
		return ret;
	CF_OK(fi_poll_add(ps, &p.a.tx_cntr->fid, 0));
	CF_OK(fi_poll_add(ps, &p.b.rx_cntr->fid, 0));
	if ((ret = cf_poll_quiet(ps, "before any traffic")))
		return ret;
	CF_OK(fi_recv(p.b.ep, p.b.buf, CF_MSG_LEN, p.b.desc, p.b.peer, &rx));
	CF_POST(&p, fi_send(p.a.ep, p.a.buf, CF_MSG_LEN, p.a.desc, p.a.peer,
			    &tx));
	/* The counters' contexts are their own fields (cf_side_open). */
	if ((ret = cf_poll_all(ps, (void *[]) { &p.a.tx_cntr, &p.b.rx_cntr },
			       names, 2)))
		return ret;
	/* Reported as changed: already there, not on a later read. */
	tx_n = fi_cntr_read(p.a.tx_cntr);
	rx_n = fi_cntr_read(p.b.rx_cntr);
	CF_CHECK(tx_n == 1 && rx_n == 1, "reported by fi_poll, a.tx_cntr is "
		 "at %llu and b.rx_cntr at %llu, not 1", (unsigned long long) tx_n,
		 (unsigned long long) rx_n);
	if ((ret = cf_cq_wait(&p, p.a.cq, NULL, "send completion")) ||
	    (ret = cf_cq_wait(&p, p.b.cq, NULL, "receive completion")) ||
	    (ret = cf_poll_quiet(ps, "after the counters were read")))
		return ret;
	CF_OK(fi_poll_del(ps, &p.a.tx_cntr->fid, 0));
	CF_OK(fi_poll_del(ps, &p.b.rx_cntr->fid, 0));
	CF_OK(fi_close(&ps->fid));
	return cf_pair_close(&p);
}

static int cf_case_poll_cntr(const char *prov)
{
	return cf_poll_cntr(prov, &cf_rdm);
}

static int cf_case_poll_cntr_msg(const char *prov)
{
	return cf_poll_cntr(prov, &cf_msg);
}

/* ---- sleeping on wait objects ---------------------------------------- */

/* How a case sleeps until one of the pair's CQs may have something. */
struct cf_waiter {
	struct cf_pair *p;
	struct fid_wait *ws;	/* a wait set holding both CQs, or */
	int epfd;		/* an epoll set of both CQs' wait fds */
	const char *how;	/* the sleeping call, for failures */
};

/* 0 when woken or told not to sleep; -FI_ETIMEDOUT after CF_SLEEP_MS. */
static int cf_sleep(struct cf_waiter *w)
{
	struct fid *fids[] = { &w->p->a.cq->fid, &w->p->b.cq->fid };
	struct epoll_event ev[2];
	int ret;

	if (w->ws) {
		ret = fi_wait(w->ws, CF_SLEEP_MS);
		return ret == -FI_EINTR ? 0 : ret;
	}
	/* The fds may be slept on only when the provider says so. */
	ret = fi_trywait(w->p->fabric, fids, 2);
	if (ret == -FI_EAGAIN)
		return 0;
	if (ret)
		return ret;
	ret = epoll_wait(w->epfd, ev, 2, CF_SLEEP_MS);
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	return ret ? 0 : -FI_ETIMEDOUT;
}

/*
 * Reads n completions of flag, contexts ctx[0..n), from cq, progressing
 * the other CQ too (rxd's acknowledgements come from the receiver's
 * progress) and sleeping between reads as w says.  On the loopback all
 * of it takes milliseconds: a whole sleep with completions still to come
 * is a lost wake-up, not a slow network.
 */
static int cf_reap(struct cf_waiter *w, struct fid_cq *cq,
		   const struct fi_context2 *ctx, int n, uint64_t flag,
		   const char *what)
{
	uint64_t deadline = cf_now_ns() + CF_WAIT_NS;
	struct fi_cq_data_entry e;
	int done = 0, ret;
	ssize_t got;

	while (done < n) {
		got = fi_cq_read(cq, &e, 1);
		if (got == 1) {
			if ((ret = cf_entry_check(&e, ctx, n, flag, what)))
				return ret;
			done++;
			continue;
		}
		if (got == -FI_EAVAIL)
			return cf_cq_error(cq, what);
		CF_CHECK(got == -FI_EAGAIN, "%s: fi_cq_read: %s", what,
			 fi_strerror((int) -got));
		CF_CHECK(cf_now_ns() < deadline, "%s: %d of %d did not come "
			 "within %llu s", what, n - done, n,
			 CF_WAIT_NS / 1000000000ULL);
		cf_progress(w->p);
		ret = cf_sleep(w);
		CF_CHECK(ret != -FI_ETIMEDOUT, "%s: %s slept the whole %d ms "
			 "with %d of %d still to come (a lost wake-up)", what,
			 w->how, CF_SLEEP_MS, n - done, n);
		CF_CHECK(!ret, "%s: %s: %s", what, w->how, fi_strerror(-ret));
	}
	return 0;
}

/*
 * A burst of sends before b posts a receive, so that b's CQ has nothing
 * to wake the waiter while a's completions come; then b's receives.
 */
static int cf_burst(struct cf_waiter *w)
{
	struct fi_context2 tx[CF_BURST], rx[CF_BURST];
	struct cf_pair *p = w->p;
	int i, ret;

	if ((ret = cf_warm_up(p)))
		return ret;
	/* One pattern: which receive a message matches is not the point. */
	cf_fill(p->a.buf, CF_MSG_LEN, 10);
	for (i = 0; i < CF_BURST; i++)
		CF_POST(p, fi_send(p->a.ep, p->a.buf, CF_MSG_LEN, p->a.desc,
				   p->a.peer, &tx[i]));
	if ((ret = cf_reap(w, p->a.cq, tx, CF_BURST, FI_SEND,
			   "a.cq's send completions")))
		return ret;
	for (i = 0; i < CF_BURST; i++)
		CF_POST(p, fi_recv(p->b.ep, p->b.buf + i * CF_MSG_LEN,
				   CF_MSG_LEN, p->b.desc, p->b.peer, &rx[i]));
	if ((ret = cf_reap(w, p->b.cq, rx, CF_BURST, FI_RECV,
			   "b.cq's receive completions")))
		return ret;
	for (i = 0; i < CF_BURST; i++)
		CF_CHECK(cf_check(p->b.buf + i * CF_MSG_LEN, CF_MSG_LEN, 10),
			 "receive %d of the burst holds other bytes", i);
	return 0;
}

static int cf_wait_fd_epoll(const char *prov, const struct cf_pair_attr *base)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct cf_pair_attr attr = *base;
	struct cf_waiter w = { .how = "epoll_wait after fi_trywait" };
	struct cf_side *s;
	struct cf_pair p;
	int fd, ret;

	attr.wait_obj = FI_WAIT_FD;
	if ((ret = cf_wait_pair_open(&p, prov, &attr, "FI_WAIT_FD",
				     false)))
		return ret;
	w.p = &p;
	w.epfd = epoll_create1(EPOLL_CLOEXEC);
	CF_CHECK(w.epfd >= 0, "epoll_create1: %s", strerror(errno));
	for (s = &p.a; s <= &p.b; s++) {
		ret = fi_control(&s->cq->fid, FI_GETWAIT, &fd);
		if (cf_unsupported(ret))
			return cf_skip("%s: FI_GETWAIT on a CQ: %s", prov,
				       fi_strerror(-ret));
		CF_OK(ret);
		CF_CHECK(!epoll_ctl(w.epfd, EPOLL_CTL_ADD, fd, &ev),
			 "epoll_ctl of %s.cq's fd %d: %s", s == &p.a ? "a" : "b",
			 fd, strerror(errno));
	}
	if ((ret = cf_burst(&w)))
		return ret;
	close(w.epfd);
	return cf_pair_close(&p);
}

static int cf_case_wait_fd_epoll(const char *prov)
{
	return cf_wait_fd_epoll(prov, &cf_rdm);
}

static int cf_case_wait_fd_epoll_msg(const char *prov)
{
	return cf_wait_fd_epoll(prov, &cf_msg);
}

/*
 * RDM only: the wait set must exist between the fabric and the CQs, so
 * the pair is joined here, and a MSG pair's accept is not worth copying.
 */
static int cf_case_wait_set(const char *prov)
{
	static const struct cf_pair_attr attr = {
		.type = FI_EP_RDM, .wait_obj = FI_WAIT_SET,
	};
	struct fi_wait_attr wait_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct cf_waiter w = { .how = "fi_wait" };
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_domain(&p, prov, &attr)))
		return ret;
	ret = fi_wait_open(p.fabric, &wait_attr, &w.ws);
	if (cf_unsupported(ret))
		return cf_skip("%s: fi_wait_open: %s", prov, fi_strerror(-ret));
	CF_OK(ret);
	p.attr.wait_set = w.ws;
	if ((ret = cf_cq_probe(&p, prov, "a wait set", false)) ||
	    (ret = cf_side_open(&p, &p.a, p.info)) ||
	    (ret = cf_side_open(&p, &p.b, p.info)) ||
	    (ret = cf_side_enable(&p, &p.a)) ||
	    (ret = cf_side_enable(&p, &p.b)))
		return ret;
	CF_CHECK(fi_av_insert(p.a.av, p.b.addr, 1, &p.a.peer, 0, NULL) == 1,
		 "fi_av_insert of b's address failed");
	CF_CHECK(fi_av_insert(p.b.av, p.a.addr, 1, &p.b.peer, 0, NULL) == 1,
		 "fi_av_insert of a's address failed");
	w.p = &p;
	if ((ret = cf_burst(&w)) ||
	    (ret = cf_side_close(&p.a)) || (ret = cf_side_close(&p.b)))
		return ret;
	/* After its CQs, before their fabric. */
	CF_OK(fi_close(&w.ws->fid));
	return cf_pair_close(&p);
}

/* ---- blocking reads and counter waits -------------------------------- */

/* fi_cq_sread on an empty CQ sleeps its timeout, then says -FI_EAGAIN. */
static int cf_sread_empty(struct fid_cq *cq, const char *what)
{
	struct fi_cq_data_entry e;
	uint64_t t0 = cf_now_ns(), dt;
	ssize_t n;

	n = fi_cq_sread(cq, &e, 1, NULL, CF_SHORT_MS);
	dt = cf_now_ns() - t0;
	CF_CHECK(n == -FI_EAGAIN, "fi_cq_sread(%d ms) on %s returned %zd (%s), "
		 "not -FI_EAGAIN", CF_SHORT_MS, what, n,
		 n < 0 ? fi_strerror((int) -n) : "a completion");
	CF_CHECK(dt >= CF_EARLY_NS && dt < CF_LATE_NS, "fi_cq_sread(%d ms) on "
		 "%s returned after %llu ms", CF_SHORT_MS, what, cf_ms(dt));
	return 0;
}

static int cf_sread_one(struct fid_cq *cq, const struct fi_context2 *ctx,
			uint64_t flag, const char *what)
{
	struct fi_cq_data_entry e;
	uint64_t t0 = cf_now_ns();
	ssize_t n;

	n = fi_cq_sread(cq, &e, 1, NULL, CF_LONG_MS);
	if (n == -FI_EAVAIL)
		return cf_cq_error(cq, what);
	CF_CHECK(n == 1, "fi_cq_sread(%d ms) for %s returned %zd (%s) after "
		 "%llu ms", CF_LONG_MS, what, n,
		 n < 0 ? fi_strerror((int) -n) : "not one entry",
		 cf_ms(cf_now_ns() - t0));
	return cf_entry_check(&e, ctx, 1, flag, what);
}

static int cf_cq_sread(const char *prov, const struct cf_pair_attr *base)
{
	struct cf_pair_attr attr = *base;
	struct fi_context2 tx, rx;
	struct cf_pair p;
	int ret;

	attr.wait_obj = FI_WAIT_UNSPEC;
	if ((ret = cf_wait_pair_open(&p, prov, &attr, "FI_WAIT_UNSPEC",
				     true)) ||
	    (ret = cf_sread_empty(p.a.cq, "a.cq before any traffic")) ||
	    (ret = cf_warm_up(&p)) ||
	    /* Nothing left over, e.g. a wake-up meant for a read entry. */
	    (ret = cf_sread_empty(p.a.cq, "a.cq after the warm-up")) ||
	    (ret = cf_sread_empty(p.b.cq, "b.cq after the warm-up")))
		return ret;
	CF_OK(fi_recv(p.b.ep, p.b.buf, CF_MSG_LEN, p.b.desc, p.b.peer, &rx));
	cf_fill(p.a.buf, CF_MSG_LEN, 3);
	CF_POST(&p, fi_send(p.a.ep, p.a.buf, CF_MSG_LEN, p.a.desc, p.a.peer,
			    &tx));
	/* b first: a's send may complete only on b's acknowledgement (rxd). */
	if ((ret = cf_sread_one(p.b.cq, &rx, FI_RECV, "the receive")) ||
	    (ret = cf_sread_one(p.a.cq, &tx, FI_SEND, "the send")) ||
	    (ret = cf_sread_empty(p.a.cq, "a.cq after its send completion")) ||
	    (ret = cf_sread_empty(p.b.cq, "b.cq after its receive completion")))
		return ret;
	CF_CHECK(cf_check(p.b.buf, CF_MSG_LEN, 3), "received bytes differ");
	return cf_pair_close(&p);
}

static int cf_case_wait_cq_sread(const char *prov)
{
	return cf_cq_sread(prov, &cf_rdm);
}

static int cf_case_wait_cq_sread_msg(const char *prov)
{
	return cf_cq_sread(prov, &cf_msg);
}

/* fi_cntr_wait for a value not reached sleeps its timeout, then fails. */
static int cf_cntr_expire(struct fid_cntr *cntr, uint64_t value,
			  const char *what)
{
	uint64_t t0 = cf_now_ns(), dt;
	int ret;

	ret = fi_cntr_wait(cntr, value, CF_SHORT_MS);
	dt = cf_now_ns() - t0;
	CF_CHECK(ret == -FI_ETIMEDOUT, "fi_cntr_wait(%s, %llu, %d ms) returned "
		 "%d (%s), not -FI_ETIMEDOUT", what, (unsigned long long) value,
		 CF_SHORT_MS, ret, fi_strerror(-ret));
	CF_CHECK(dt >= CF_EARLY_NS && dt < CF_LATE_NS, "fi_cntr_wait(%s, %llu, "
		 "%d ms) returned after %llu ms", what,
		 (unsigned long long) value, CF_SHORT_MS, cf_ms(dt));
	return 0;
}

static int cf_cntr_reach(struct fid_cntr *cntr, uint64_t value,
			 const char *what)
{
	uint64_t t0 = cf_now_ns(), v;
	int ret;

	ret = fi_cntr_wait(cntr, value, CF_LONG_MS);
	CF_CHECK(!ret, "fi_cntr_wait(%s, %llu, %d ms) returned %d (%s) after "
		 "%llu ms", what, (unsigned long long) value, CF_LONG_MS, ret,
		 fi_strerror(-ret), cf_ms(cf_now_ns() - t0));
	v = fi_cntr_read(cntr);
	CF_CHECK(v == value, "%s at %llu after fi_cntr_wait for %llu", what,
		 (unsigned long long) v, (unsigned long long) value);
	return 0;
}

/* Skips unless fi_cntr_wait on the pair's counters keeps its timeout. */
static int cf_cntr_probe(const char *prov, const struct cf_pair_attr *attr)
{
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP,
					  .wait_obj = FI_WAIT_UNSPEC };
	struct cf_timed t = { 0 };
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_domain(&p, prov, attr)))
		return ret;
	/* As cf_side_open opens them. */
	CF_OK(fi_cntr_open(p.domain, &cntr_attr, &t.cntr, NULL));
	if ((ret = cf_timed_probe(&t, prov)))
		return ret;
	CF_OK(fi_close(&t.cntr->fid));
	return cf_pair_close(&p);
}

static int cf_cntr_waits(const char *prov, const struct cf_pair_attr *base)
{
	struct cf_pair_attr attr = *base;
	struct fi_context2 tx, rx;
	struct cf_pair p;
	int ret;

	attr.cntrs = true;
	if ((ret = cf_cntr_probe(prov, &attr)) ||
	    (ret = cf_pair_open(&p, prov, &attr)) ||
	    (ret = cf_cntr_expire(p.a.tx_cntr, 1, "a.tx_cntr")) ||
	    (ret = cf_warm_up(&p)) ||
	    (ret = cf_cntr_expire(p.a.tx_cntr, 2, "a.tx_cntr")) ||
	    (ret = cf_cntr_expire(p.b.rx_cntr, 2, "b.rx_cntr")))
		return ret;
	CF_OK(fi_recv(p.b.ep, p.b.buf, CF_MSG_LEN, p.b.desc, p.b.peer, &rx));
	CF_POST(&p, fi_send(p.a.ep, p.a.buf, CF_MSG_LEN, p.a.desc, p.a.peer,
			    &tx));
	/* b first: a's send may complete only on b's acknowledgement (rxd). */
	if ((ret = cf_cntr_reach(p.b.rx_cntr, 2, "b.rx_cntr")) ||
	    (ret = cf_cntr_reach(p.a.tx_cntr, 2, "a.tx_cntr")))
		return ret;
	return cf_pair_close(&p);
}

static int cf_case_wait_cntr(const char *prov)
{
	return cf_cntr_waits(prov, &cf_rdm);
}

static int cf_case_wait_cntr_msg(const char *prov)
{
	return cf_cntr_waits(prov, &cf_msg);
}

const struct cf_case cf_wait_cases[] = {
	{ "poll_cq_send", cf_case_poll_cq_send },
	{ "poll_cq_send_msg", cf_case_poll_cq_send_msg },
	{ "poll_cntr", cf_case_poll_cntr },
	{ "poll_cntr_msg", cf_case_poll_cntr_msg },
	{ "wait_fd_epoll", cf_case_wait_fd_epoll },
	{ "wait_fd_epoll_msg", cf_case_wait_fd_epoll_msg },
	{ "wait_set", cf_case_wait_set },
	{ "wait_cq_sread", cf_case_wait_cq_sread },
	{ "wait_cq_sread_msg", cf_case_wait_cq_sread_msg },
	{ "wait_cntr", cf_case_wait_cntr },
	{ "wait_cntr_msg", cf_case_wait_cntr_msg },
	{ NULL, NULL },
};
