/* SPDX-License-Identifier: MIT */
/*
 * The progress thread: posts deferred operations when their time comes
 * while the application is busy elsewhere.
 *
 * Why a thread that sleeps, plus release on every application call: a
 * message must leave at its release time even while the application
 * computes (the LogGP overlap of L with work), which rules out releasing
 * only inside application calls; but a thread that spins would take one
 * of the few cores from the ranks it is measuring.  So the thread sleeps
 * on a condition variable until the earliest release time of any domain
 * (with the timer slack cut to 1 ns), and every call into a shimmed
 * domain (send, CQ read) also releases what is due, which is what keeps
 * short delays precise when the application polls, as MPI and libfabric
 * applications do.  The thread never blocks on a domain's lock while it
 * holds its own (trylock), so application threads may kick it while
 * holding theirs.
 */
#include <errno.h>
#include <sys/prctl.h>
#include <time.h>

#include <lgp/clock.h>

#include "lgp_fi.h"

/* When a domain is busy in the application, look again this soon. */
#define LGP_PROGRESS_RETRY_NS	20000ULL

static pthread_mutex_t lgp_prog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lgp_prog_cond;
static struct lgp_domain *lgp_prog_list;
static bool lgp_prog_started;
static uint64_t lgp_prog_wake = UINT64_MAX;	/* when the thread will look */

static void lgp_progress_sleep(uint64_t until)
{
	struct timespec ts;
	uint64_t now = lgp_now_ns(), delta;

	lgp_prog_wake = until;
	if (until == UINT64_MAX) {
		pthread_cond_wait(&lgp_prog_cond, &lgp_prog_lock);
		return;
	}
	delta = until > now ? until - now : 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t) (delta / 1000000000ULL);
	ts.tv_nsec += (long) (delta % 1000000000ULL);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&lgp_prog_cond, &lgp_prog_lock, &ts);
}

static void *lgp_progress_main(void *arg)
{
	struct lgp_domain *dom;
	uint64_t now, next, r;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_mutex_lock(&lgp_prog_lock);
	for (;;) {
		next = UINT64_MAX;
		now = lgp_now_ns();
		for (dom = lgp_prog_list; dom; dom = dom->prog_next) {
			r = __atomic_load_n(&dom->next_release, __ATOMIC_ACQUIRE);
			if (r <= now) {
				if (pthread_mutex_trylock(&dom->lock) == 0) {
					lgp_domain_progress(dom, lgp_now_ns());
					r = dom->next_release;
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
	return NULL;
}

static int lgp_progress_start(void)
{
	pthread_condattr_t ca;
	pthread_attr_t ta;
	pthread_t tid;
	int ret;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&lgp_prog_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&tid, &ta, lgp_progress_main, NULL);
	pthread_attr_destroy(&ta);
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

void lgp_progress_kick(struct lgp_domain *dom, uint64_t release)
{
	pthread_mutex_lock(&lgp_prog_lock);
	if (release < lgp_prog_wake) {
		lgp_prog_wake = release;
		pthread_cond_signal(&lgp_prog_cond);
	}
	pthread_mutex_unlock(&lgp_prog_lock);
}
