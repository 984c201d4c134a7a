/* SPDX-License-Identifier: MIT */
/*
 * fi_cq_signal and fi_cq_sread, on every wait object the provider opens
 * CQs with (FI_WAIT_UNSPEC, FI_WAIT_FD, FI_WAIT_MUTEX_COND,
 * FI_WAIT_YIELD): a signal given before the read, from the same thread,
 * makes the next fi_cq_sread return -FI_EAGAIN at once; one given while
 * another thread is blocked in fi_cq_sread wakes it; and with nothing
 * signalled an fi_cq_sread on an idle CQ keeps its timeout.  Beneath
 * active delays the shim's fi_cq_sread is a loop of the real CQ's reads,
 * and the shim signals the real CQ itself for the completions it
 * synthesises: neither may take a signal meant for the program.
 *
 * Every read runs on a thread of its own with a bound, so that a lost
 * wake-up fails the case instead of hanging it.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "conform.h"

/* The timed read a signal must cut short. */
#define CF_SIG_READ_MS	2000
/* How long past its start a signalled read may take to return. */
#define CF_SIG_BOUND_NS	(1000ULL * 1000000ULL)
/* An idle read's timeout, and how early and late it may end. */
#define CF_SIG_IDLE_MS	50
#define CF_SIG_EARLY_NS	(40ULL * 1000000ULL)
#define CF_SIG_LATE_NS	(1000ULL * 1000000ULL)
/* Rounds of both signals on each wait object. */
#define CF_SIG_ROUNDS	8

/* One fi_cq_sread on a thread, and what came of it. */
struct cf_sread {
	struct fid_cq *cq;
	int timeout_ms;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	ssize_t ret;
	uint64_t start, end;
};

static void *cf_sread_main(void *arg)
{
	struct cf_sread *r = arg;
	struct fi_cq_data_entry e;
	ssize_t ret;

	ret = fi_cq_sread(r->cq, &e, 1, NULL, r->timeout_ms);
	pthread_mutex_lock(&r->lock);
	r->end = cf_now_ns();
	r->ret = ret;
	r->done = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static int cf_sread_start(struct cf_sread *r, struct fid_cq *cq,
			  int timeout_ms)
{
	int ret;

	memset(r, 0, sizeof(*r));
	r->cq = cq;
	r->timeout_ms = timeout_ms;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->start = cf_now_ns();
	ret = pthread_create(&r->thread, NULL, cf_sread_main, r);
	CF_CHECK(!ret, "pthread_create: %s", strerror(ret));
	return 0;
}

/*
 * Waits until the read has returned or bound_ns have passed; returns
 * whether it returned.  One that did not is left blocked: the case fails
 * and its process ends.
 */
static bool cf_sread_join(struct cf_sread *r, uint64_t bound_ns)
{
	uint64_t until = cf_now_ns() + bound_ns, now;
	struct timespec ts;
	bool done;

	pthread_mutex_lock(&r->lock);
	while (!r->done && (now = cf_now_ns()) < until) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t) ((until - now) / 1000000000ULL);
		ts.tv_nsec += (long) ((until - now) % 1000000000ULL);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&r->cond, &r->lock, &ts);
	}
	done = r->done;
	pthread_mutex_unlock(&r->lock);
	if (done) {
		pthread_join(r->thread, NULL);
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
	}
	return done;
}

/* A signalled read returned -FI_EAGAIN within CF_SIG_BOUND_NS. */
static int cf_sread_signalled(struct cf_sread *r, const char *obj,
			      const char *how)
{
	CF_CHECK(cf_sread_join(r, CF_SIG_BOUND_NS), "%s: fi_cq_sread(%d ms) "
		 "%s did not return within %llu ms", obj, r->timeout_ms, how,
		 CF_SIG_BOUND_NS / 1000000ULL);
	CF_CHECK(r->ret == -FI_EAGAIN, "%s: fi_cq_sread %s returned %zd (%s), "
		 "not -FI_EAGAIN", obj, how, r->ret,
		 r->ret < 0 ? fi_strerror((int) -r->ret) : "an entry");
	return 0;
}

/*
 * An idle read keeps its timeout: returns -FI_EAGAIN after it.  If
 * ignores is not NULL, a read that has not returned after CF_SIG_LATE_NS
 * is freed by a signal and *ignores set: libfabric 1.17's FI_WAIT_YIELD
 * (shm's FI_WAIT_UNSPEC) spins until something comes, whatever the
 * timeout, and FI_GETWAITOBJ does not say which wait a CQ has there.
 */
static int cf_sread_idle(struct fid_cq *cq, const char *obj, bool *ignores)
{
	struct cf_sread r;
	int ret;

	if ((ret = cf_sread_start(&r, cq, CF_SIG_IDLE_MS)))
		return ret;
	if (!cf_sread_join(&r, CF_SIG_LATE_NS)) {
		CF_CHECK(ignores, "%s: fi_cq_sread(%d ms) on an idle CQ did not "
			 "return within %llu ms", obj, CF_SIG_IDLE_MS,
			 CF_SIG_LATE_NS / 1000000ULL);
		*ignores = true;
		CF_OK(fi_cq_signal(cq));
		return cf_sread_signalled(&r, obj, "freed by a signal");
	}
	CF_CHECK(r.ret == -FI_EAGAIN, "%s: fi_cq_sread(%d ms) on an idle CQ "
		 "returned %zd (%s)", obj, CF_SIG_IDLE_MS, r.ret,
		 r.ret < 0 ? fi_strerror((int) -r.ret) : "an entry");
	CF_CHECK(r.end - r.start >= CF_SIG_EARLY_NS, "%s: fi_cq_sread(%d ms) "
		 "on an idle CQ returned after %llu ms", obj, CF_SIG_IDLE_MS,
		 (unsigned long long) ((r.end - r.start) / 1000000ULL));
	return 0;
}

/* One message each way, so the CQs have seen traffic and are read. */
static int cf_sig_warm_up(struct cf_pair *p)
{
	struct fi_context2 tx, rx;
	int ret;

	CF_OK(fi_recv(p->b.ep, p->b.buf, 64, p->b.desc, p->b.peer, &rx));
	CF_POST(p, fi_send(p->a.ep, p->a.buf, 64, p->a.desc, p->a.peer, &tx));
	if ((ret = cf_cq_wait(p, p->a.cq, NULL, "warm-up send completion")) ||
	    (ret = cf_cq_wait(p, p->b.cq, NULL, "warm-up receive completion")))
		return ret;
	return 0;
}

static int cf_sig_rounds(struct cf_pair *p, bool timed, const char *obj)
{
	struct cf_sread r;
	int i, ret;

	for (i = 0; i < CF_SIG_ROUNDS; i++) {
		/* Signalled first, from the thread that then reads. */
		CF_OK(fi_cq_signal(p->a.cq));
		if ((ret = cf_sread_start(&r, p->a.cq, CF_SIG_READ_MS)) ||
		    (ret = cf_sread_signalled(&r, obj, "after fi_cq_signal")))
			return ret;
		/* Signalled while the read may already block. */
		if ((ret = cf_sread_start(&r, p->b.cq, CF_SIG_READ_MS)))
			return ret;
		CF_OK(fi_cq_signal(p->b.cq));
		if ((ret = cf_sread_signalled(&r, obj, "signalled meanwhile")))
			return ret;
	}
	/* Every signal was taken or is stale: the timeouts hold again. */
	if (timed && ((ret = cf_sread_idle(p->a.cq, obj, NULL)) ||
		      (ret = cf_sread_idle(p->b.cq, obj, NULL))))
		return ret;
	return 0;
}

static int cf_sig_one(const char *prov, enum fi_ep_type type,
		      enum fi_wait_obj obj, const char *name, bool *tried)
{
	const struct cf_pair_attr attr = { .type = type, .wait_obj = obj };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA,
				      .wait_obj = obj, .size = 128 };
	bool ignores = false;
	struct fid_cq *probe;
	struct cf_pair p;
	int ret;

	/* Where the domain has no such wait object, the pair could not open. */
	if ((ret = cf_pair_domain(&p, prov, &attr)))
		return ret;
	ret = fi_cq_open(p.domain, &cq_attr, &probe, NULL);
	if (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP || ret == -FI_EINVAL)
		return cf_pair_close(&p);
	CF_OK(ret);
	/*
	 * An idle read before any signal: nothing left behind to wake it.
	 * FI_WAIT_YIELD is known to ignore it (cf_sread_idle).
	 */
	if (obj == FI_WAIT_YIELD)
		ignores = true;
	else if ((ret = cf_sread_idle(probe, name, &ignores)))
		return ret;
	CF_OK(fi_close(&probe->fid));
	if ((ret = cf_pair_close(&p)) ||
	    (ret = cf_pair_open(&p, prov, &attr)) ||
	    (ret = cf_sig_warm_up(&p)) ||
	    (ret = cf_sig_rounds(&p, !ignores, name)))
		return ret;
	*tried = true;
	return cf_pair_close(&p);
}

static int cf_wait_cq_signal(const char *prov, enum fi_ep_type type)
{
	static const struct {
		enum fi_wait_obj obj;
		const char *name;
	} objs[] = {
		{ FI_WAIT_UNSPEC, "FI_WAIT_UNSPEC" },
		{ FI_WAIT_FD, "FI_WAIT_FD" },
		{ FI_WAIT_MUTEX_COND, "FI_WAIT_MUTEX_COND" },
		{ FI_WAIT_YIELD, "FI_WAIT_YIELD" },
	};
	bool tried = false;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		if ((ret = cf_sig_one(prov, type, objs[i].obj, objs[i].name,
				      &tried)))
			return ret;
	if (!tried)
		return cf_skip("%s opens CQs with no wait object", prov);
	return 0;
}

CF_EP_TYPES(wait_cq_signal)

const struct cf_case cf_signal_cases[] = {
	CF_EP_TYPE_CASES(wait_cq_signal),
	{ NULL, NULL },
};
