/* SPDX-License-Identifier: MIT */
/*
 * The progress thread: posts deferred operations when their time comes
 * while the application is busy elsewhere.
 *
 * Why a thread that sleeps, plus release on every application call: a
 * message must leave at its release time even while the application
 * computes (the LogGP overlap of L with work), which rules out releasing
 * only inside application calls; but a thread that spins would take one
 * of the few cores from the ranks it is measuring.  So every call into a
 * shimmed domain (send, CQ read) releases what is due, which keeps delays
 * exact for applications that poll, as MPI and libfabric programs do, and
 * the thread sleeps on a condition variable until the earliest release
 * time to cover an application that computes.  A timed sleep wakes late
 * (tens of us on a busy or virtual host, even with the timer slack cut to
 * 1 ns), so it sleeps until LGP_PROGRESS_SPIN_NS before the release and
 * spins the rest, without its lock; as SCHED_IDLE, only on a core that
 * has nothing else to run.
 *
 * Waking the thread is not free: a futex call in the send path, and a
 * thread that preempts a busy-polling rank on a full machine makes the
 * scheduler shuffle the ranks; on 2 cores that doubled a 100 us ΔL.  So
 *   - the send path wakes the thread only if it would otherwise look more
 *     than LGP_PROGRESS_TICK_NS late; while the process is sending (within
 *     LGP_PROGRESS_LINGER_NS) the thread looks at least every tick, after
 *     that it sleeps until kicked and an idle process burns no CPU;
 *   - by default the thread runs as SCHED_IDLE (LOGGP_PROGRESS_THREAD=idle):
 *     it never preempts a rank, and runs at once wherever a core is free.
 *     With every core busy computing, releases then wait for the next call
 *     into the library; LOGGP_PROGRESS_THREAD=normal makes the thread
 *     preempt instead, at the cost of disturbing polling ranks.
 *
 * A kick that finds the thread due to look soon enough anyway does not
 * wake it, and reads that time without the thread's lock.  The time is
 * that of the thread's last scan, so a send queued while the thread is
 * scanning, behind it, would find a time that seemed soon enough, and the
 * thread would then sleep without a deadline: the send waited for the
 * program's next call, for ever if the program blocked in the provider
 * (fi_cntr_wait, an fi_cntr_read loop).  So every kick first records its
 * release time (the earliest since the scan began, lgp_prog_missed), then
 * reads the wake-up time; the thread first stores its wake-up time, then
 * reads that record and sleeps no later than it (Dekker's pair: one of the
 * two sees the other's store).  Only shortened, never a rescan per kick,
 * so a process sending fast does not keep the thread scanning.
 *
 * The thread never blocks on a domain's lock while holding its own
 * (trylock), so application threads may kick it while holding theirs.
 * Work the thread does under its own lock may kick it too (a drained
 * completion is synthesised for a CQ with a wait object): that kick only
 * records the time, since the thread recomputes its next wake-up anyway.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#include <lgp/clock.h>

#include "lgp_config.h"
#include "lgp_domain.h"
#include "lgp_engine.h"
#include "lgp_log.h"
#include "lgp_progress.h"

/* When a domain is busy in the application, look again this soon. */
#define LGP_PROGRESS_RETRY_NS	20000ULL
/* Longest sleep of the thread while the process is sending. */
#define LGP_PROGRESS_TICK_NS	100000ULL
/* How long an exiting process waits for its deferred sends to go out. */
#define LGP_PROGRESS_EXIT_FLUSH_NS	5000000000ULL
/* How long after the last send the thread keeps ticking. */
#define LGP_PROGRESS_LINGER_NS	10000000ULL
/* The last stretch before a release, spun instead of slept. */
#define LGP_PROGRESS_SPIN_NS	20000ULL

static pthread_mutex_t lgp_prog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lgp_prog_cond;
static struct lgp_domain *lgp_prog_list;
static bool lgp_prog_started;
static bool lgp_prog_stop;
static pthread_t lgp_prog_tid;
static uint64_t lgp_prog_wake = UINT64_MAX;	/* when the thread will look */
static uint64_t lgp_prog_activity;		/* time of the last deferral */
/* The earliest release kicked since the thread's scan began. */
static uint64_t lgp_prog_missed = UINT64_MAX;
static __thread bool lgp_prog_holder;		/* this thread holds the lock */

static void lgp_prog_lock_take(void)
{
	pthread_mutex_lock(&lgp_prog_lock);
	lgp_prog_holder = true;
}

static void lgp_prog_lock_drop(void)
{
	lgp_prog_holder = false;
	pthread_mutex_unlock(&lgp_prog_lock);
}

/* Sleeps until until, or a release kicked since the scan began. */
static void lgp_progress_sleep(uint64_t until)
{
	struct timespec ts;
	uint64_t now = lgp_now_ns(), delta, act, missed;

	/* A kick after now was read is activity too (no wrap-around). */
	act = __atomic_load_n(&lgp_prog_activity, __ATOMIC_RELAXED);
	if (until == UINT64_MAX &&
	    (act > now || now - act < LGP_PROGRESS_LINGER_NS))
		until = now + LGP_PROGRESS_TICK_NS;
	if (until != UINT64_MAX && until > now + LGP_PROGRESS_TICK_NS)
		until = now + LGP_PROGRESS_TICK_NS;
	__atomic_store_n(&lgp_prog_wake, until, __ATOMIC_SEQ_CST);
	/*
	 * A kick that read the wake-up time before the store above did not
	 * wake the thread, and its send may be one the scan missed: its
	 * release is here.  One after it sees this time, and takes the lock
	 * if it is too late.
	 */
	missed = __atomic_load_n(&lgp_prog_missed, __ATOMIC_SEQ_CST);
	if (missed < until) {
		until = missed;
		__atomic_store_n(&lgp_prog_wake, until, __ATOMIC_SEQ_CST);
	}
	if (until == UINT64_MAX) {
		pthread_cond_wait(&lgp_prog_cond, &lgp_prog_lock);
		return;
	}
	delta = until > now ? until - now : 0;
	if (delta <= LGP_PROGRESS_SPIN_NS) {
		lgp_prog_lock_drop();
		lgp_spin_until(until);
		lgp_prog_lock_take();
		return;
	}
	delta -= LGP_PROGRESS_SPIN_NS;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t) (delta / 1000000000ULL);
	ts.tv_nsec += (long) (delta % 1000000000ULL);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&lgp_prog_cond, &lgp_prog_lock, &ts);
}

/* When the domain next needs the thread: a release or a wait to signal. */
static uint64_t lgp_progress_due(struct lgp_domain *dom)
{
	uint64_t r = lgp_eng_next_release(&dom->eng);
	uint64_t s = __atomic_load_n(&dom->next_signal, __ATOMIC_ACQUIRE);

	return r < s ? r : s;
}

static void *lgp_progress_main(void *arg)
{
	struct lgp_domain *dom;
	uint64_t now, next, r;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (lgp_config_get()->progress_idle) {
		struct sched_param sp = { 0 };

		pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	}
	lgp_prog_lock_take();
	while (!lgp_prog_stop) {
		/* Before the scan reads any domain: what it sees is not missed. */
		__atomic_store_n(&lgp_prog_missed, UINT64_MAX, __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		next = UINT64_MAX;
		now = lgp_now_ns();
		for (dom = lgp_prog_list; dom; dom = dom->prog_next) {
			r = lgp_progress_due(dom);
			if (__atomic_load_n(&dom->inflight, __ATOMIC_RELAXED))
				r = now;
			if (r <= now) {
				if (pthread_mutex_trylock(&dom->lock) == 0) {
					lgp_eng_release(&dom->eng, lgp_now_ns());
					if (dom->inflight)
						lgp_domain_drive(dom);
					lgp_domain_signal(dom, lgp_now_ns());
					r = lgp_progress_due(dom);
					if (dom->inflight && r > now + LGP_PROGRESS_TICK_NS)
						r = now + LGP_PROGRESS_TICK_NS;
					pthread_mutex_unlock(&dom->lock);
				} else {
					r = now + LGP_PROGRESS_RETRY_NS;
				}
			}
			if (r < next)
				next = r;
		}
		lgp_progress_sleep(next);
	}
	lgp_prog_lock_drop();
	return NULL;
}

static int lgp_progress_start(void)
{
	pthread_condattr_t ca;
	int ret;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&lgp_prog_cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&lgp_prog_tid, NULL, lgp_progress_main, NULL);
	if (ret) {
		LGP_WARN(FI_LOG_DOMAIN, "cannot start the progress thread: %d\n", ret);
		return -FI_ENOMEM;
	}
	lgp_prog_started = true;
	return 0;
}

int lgp_progress_add(struct lgp_domain *dom)
{
	int ret = 0;

	pthread_mutex_lock(&lgp_prog_lock);
	if (!lgp_prog_started)
		ret = lgp_progress_start();
	if (!ret) {
		dom->prog_next = lgp_prog_list;
		lgp_prog_list = dom;
	}
	pthread_mutex_unlock(&lgp_prog_lock);
	return ret;
}

void lgp_progress_del(struct lgp_domain *dom)
{
	struct lgp_domain **p;

	pthread_mutex_lock(&lgp_prog_lock);
	for (p = &lgp_prog_list; *p; p = &(*p)->prog_next) {
		if (*p == dom) {
			*p = dom->prog_next;
			break;
		}
	}
	pthread_mutex_unlock(&lgp_prog_lock);
}

void lgp_progress_kick(uint64_t release, uint64_t now)
{
	uint64_t missed;

	/* The thread itself, or a flush holding its lock: it looks again. */
	if (lgp_prog_holder)
		return;
	__atomic_store_n(&lgp_prog_activity, now, __ATOMIC_RELAXED);
	/*
	 * Recorded before the wake-up time is read (lgp_progress_sleep), by a
	 * read-modify-write even when an earlier release is there already.
	 */
	missed = __atomic_load_n(&lgp_prog_missed, __ATOMIC_SEQ_CST);
	while (!__atomic_compare_exchange_n(&lgp_prog_missed, &missed,
					    release < missed ? release : missed,
					    false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST))
		;
	if (release + LGP_PROGRESS_TICK_NS >=
	    __atomic_load_n(&lgp_prog_wake, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&lgp_prog_lock);
	if (release < lgp_prog_wake) {
		lgp_prog_wake = release;
		pthread_cond_signal(&lgp_prog_cond);
	}
	pthread_mutex_unlock(&lgp_prog_lock);
}

void lgp_progress_fini(void)
{
	pthread_mutex_lock(&lgp_prog_lock);
	if (!lgp_prog_started) {
		pthread_mutex_unlock(&lgp_prog_lock);
		return;
	}
	lgp_prog_stop = true;
	pthread_cond_signal(&lgp_prog_cond);
	pthread_mutex_unlock(&lgp_prog_lock);
	pthread_join(lgp_prog_tid, NULL);
	lgp_prog_started = false;
}

void lgp_progress_flush_all(void)
{
	uint64_t deadline = lgp_now_ns() + LGP_PROGRESS_EXIT_FLUSH_NS;
	struct lgp_domain *dom;
	bool pending;

	do {
		pending = false;
		lgp_prog_lock_take();
		for (dom = lgp_prog_list; dom; dom = dom->prog_next) {
			pthread_mutex_lock(&dom->lock);
			lgp_eng_release(&dom->eng, lgp_now_ns());
			if (dom->inflight)
				lgp_domain_drive(dom);
			pending |= lgp_eng_queued(&dom->eng) || dom->inflight;
			pthread_mutex_unlock(&dom->lock);
		}
		lgp_prog_lock_drop();
	} while (pending && lgp_now_ns() < deadline);
}
