/* SPDX-License-Identifier: MIT */
/* Unit test of stats.h: counters, maxima, concurrency and the JSON line. */
#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "lgp/stats.h"

enum { THREADS = 4, ADDS = 200000 };

static struct lgp_stats shared;

static void *stats_worker(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg;
	int i;

	for (i = 0; i < ADDS; i++) {
		lgp_stats_add(&shared, LGP_STAT_MSGS, 1);
		lgp_stats_add(&shared, LGP_STAT_BYTES, 3);
		lgp_stats_max(&shared, LGP_STAT_MAX_QUEUE_DEPTH,
			      base * ADDS + (uint64_t)i);
	}
	return NULL;
}

static void test_counters(void)
{
	struct lgp_stats s = { 0 };
	int i;

	for (i = 0; i < LGP_STAT_COUNT; i++)
		CHECK_EQ_U64(lgp_stats_get(&s, i), 0);
	lgp_stats_add(&s, LGP_STAT_LATENCY_NS, 500);
	lgp_stats_add(&s, LGP_STAT_LATENCY_NS, 0);
	lgp_stats_add(&s, LGP_STAT_LATENCY_NS, 250);
	CHECK_EQ_U64(lgp_stats_get(&s, LGP_STAT_LATENCY_NS), 750);
	lgp_stats_max(&s, LGP_STAT_MAX_QUEUE_DEPTH, 5);
	lgp_stats_max(&s, LGP_STAT_MAX_QUEUE_DEPTH, 3);
	CHECK_EQ_U64(lgp_stats_get(&s, LGP_STAT_MAX_QUEUE_DEPTH), 5);
	lgp_stats_max(&s, LGP_STAT_MAX_QUEUE_DEPTH, UINT64_MAX);
	CHECK_EQ_U64(lgp_stats_get(&s, LGP_STAT_MAX_QUEUE_DEPTH), UINT64_MAX);
	CHECK_EQ_U64(lgp_stats_get(&s, LGP_STAT_MSGS), 0);
}

static void test_threads(void)
{
	pthread_t t[THREADS];
	uintptr_t i;

	for (i = 0; i < THREADS; i++)
		CHECK_EQ_INT(pthread_create(&t[i], NULL, stats_worker,
					    (void *)i), 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ_U64(lgp_stats_get(&shared, LGP_STAT_MSGS),
		     (uint64_t)THREADS * ADDS);
	CHECK_EQ_U64(lgp_stats_get(&shared, LGP_STAT_BYTES),
		     (uint64_t)THREADS * ADDS * 3);
	CHECK_EQ_U64(lgp_stats_get(&shared, LGP_STAT_MAX_QUEUE_DEPTH),
		     (uint64_t)THREADS * ADDS - 1);
}

static void test_names(void)
{
	CHECK_STR(lgp_stat_name(LGP_STAT_MSGS), "msgs");
	CHECK_STR(lgp_stat_name(LGP_STAT_SEND_OVERHEAD_NS), "send_overhead_ns");
	CHECK_STR(lgp_stat_name(LGP_STAT_MAX_QUEUE_DEPTH), "max_queue_depth");
	CHECK_STR(lgp_stat_name(LGP_STAT_EAGAIN), "eagain");
	CHECK(lgp_stat_name(LGP_STAT_COUNT) == NULL);
}

static void test_json(void)
{
	struct lgp_stats s = { 0 };
	char buf[1024], want[1024], small[20];
	int i, n;

	for (i = 0; i < LGP_STAT_COUNT; i++)
		lgp_stats_add(&s, i, (uint64_t)i + 1);
	lgp_stats_add(&s, LGP_STAT_BYTES, UINT64_MAX - 2);
	snprintf(want, sizeof(want),
		 "{\"pid\":%d,\"provider\":\"tcp\",\"msgs\":1,"
		 "\"bytes\":18446744073709551615,\"send_overhead_ns\":3,"
		 "\"recv_overhead_ns\":4,\"recv_msgs\":5,\"gap_ns\":6,"
		 "\"bulk_gap_ns\":7,\"latency_ns\":8,\"max_queue_depth\":9,"
		 "\"eagain\":10,\"post_errors\":11,\"releases\":12,"
		 "\"late_ns\":13,\"late_max_ns\":14,\"late_over_10us\":15,"
		 "\"early_releases\":16,"
		 "\"late_hist_us\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}",
		 (int)getpid());
	n = lgp_stats_json(&s, "tcp", buf, sizeof(buf));
	CHECK_STR(buf, want);
	CHECK_EQ_U64((uint64_t)n, strlen(want));

	/* like snprintf: truncated but terminated, returns the full length */
	CHECK_EQ_INT(lgp_stats_json(&s, "tcp", small, sizeof(small)), n);
	CHECK_EQ_U64(strlen(small), sizeof(small) - 1);
	CHECK(!strncmp(small, want, sizeof(small) - 1));
	CHECK_EQ_INT(lgp_stats_json(&s, "tcp", NULL, 0), n);

	n = lgp_stats_json(&s, NULL, buf, sizeof(buf));
	CHECK(strstr(buf, ",\"provider\":null,\"msgs\":1,") != NULL);
	CHECK_EQ_U64((uint64_t)n, strlen(buf));

	lgp_stats_json(&s, "a\"b\\c\n", buf, sizeof(buf));
	CHECK(strstr(buf, ",\"provider\":\"a\\\"b\\\\c\\u000a\",") != NULL);
	CHECK(!strchr(buf, '\n'));
}

/* Bucket edges: < 1 us, then powers of two of microseconds, then the rest. */
static void test_late_buckets(void)
{
	CHECK_EQ_INT(lgp_late_bucket(0), 0);
	CHECK_EQ_INT(lgp_late_bucket(999), 0);
	CHECK_EQ_INT(lgp_late_bucket(1000), 1);
	CHECK_EQ_INT(lgp_late_bucket(1999), 1);
	CHECK_EQ_INT(lgp_late_bucket(2000), 2);
	CHECK_EQ_INT(lgp_late_bucket(3999), 2);
	CHECK_EQ_INT(lgp_late_bucket(4000), 3);
	CHECK_EQ_INT(lgp_late_bucket(8191999), 13);
	CHECK_EQ_INT(lgp_late_bucket(8192000), 14);
	CHECK_EQ_INT(lgp_late_bucket(16383999), 14);
	CHECK_EQ_INT(lgp_late_bucket(16384000), 15);
	CHECK_EQ_INT(lgp_late_bucket(UINT64_MAX), 15);
}

typedef void (*release_fn)(struct lgp_stats *, uint64_t, uint64_t);

/* Both recorders keep the same account: shared (atomic) and owned. */
static void test_release(release_fn release)
{
	struct lgp_stats s = { 0 };
	char buf[1024];

	release(&s, 1000, 1000);		/* on time */
	release(&s, 1000, 1500);		/* 0.5 us late */
	release(&s, 1000, 4000);		/* 3 us late */
	release(&s, 1000, 31000);		/* 30 us late */
	release(&s, 1000, 11000);		/* 10 us late: not over 10 us */
	release(&s, 5000, 4000);		/* early */
	CHECK_EQ_U64(lgp_stats_get(&s, LGP_STAT_RELEASES), 6);
	CHECK_EQ_U64(lgp_stats_get(&s, LGP_STAT_EARLY), 1);
	CHECK_EQ_U64(lgp_stats_get(&s, LGP_STAT_LATE_NS),
		     500 + 3000 + 30000 + 10000);
	CHECK_EQ_U64(lgp_stats_get(&s, LGP_STAT_LATE_MAX_NS), 30000);
	CHECK_EQ_U64(lgp_stats_get(&s, LGP_STAT_LATE_OVER), 1);
	CHECK_EQ_U64(s.late_hist[0], 2);
	CHECK_EQ_U64(s.late_hist[2], 1);
	CHECK_EQ_U64(s.late_hist[4], 1);
	CHECK_EQ_U64(s.late_hist[5], 1);
	lgp_stats_json(&s, "shm", buf, sizeof(buf));
	CHECK(strstr(buf, ",\"late_hist_us\":[2,0,1,0,1,1,0,0,0,0,0,0,0,0,0,0]}")
	      != NULL);
}

/* Bucket k holds lateness below lgp_late_bucket_bound_ns(k). */
static void test_late_bounds(void)
{
	unsigned int k;

	CHECK_EQ_U64(lgp_late_bucket_bound_ns(0), 1000);
	CHECK_EQ_U64(lgp_late_bucket_bound_ns(4), 16000);
	CHECK_EQ_U64(lgp_late_bucket_bound_ns(14), 16384000);
	CHECK_EQ_U64(lgp_late_bucket_bound_ns(15), UINT64_MAX);
	CHECK_EQ_U64(lgp_late_bucket_bound_ns(99), UINT64_MAX);
	for (k = 0; k < LGP_LATE_BUCKETS - 1; k++) {
		CHECK_EQ_INT(lgp_late_bucket(lgp_late_bucket_bound_ns(k) - 1), k);
		CHECK_EQ_INT(lgp_late_bucket(lgp_late_bucket_bound_ns(k)), k + 1);
	}
	CHECK_STR(lgp_stat_name(LGP_STAT_LATE_FIRST), "releases");
	CHECK_STR(lgp_stat_name(LGP_STAT_LATE_LAST), "early_releases");
}

/*
 * The delay histogram: absent from the line until started; buckets wide
 * enough that the largest delay lands below the last, which holds the rest.
 */
static void test_delay_hist(void)
{
	struct lgp_stats s;
	char buf[4096], want[1024];
	int n, i;

	memset(&s, 0, sizeof(s));
	lgp_stats_delay(&s, 5000);	/* not started: not counted */
	lgp_stats_json(&s, "tcp", buf, sizeof(buf));
	CHECK(strstr(buf, "delay") == NULL);
	lgp_stats_delay_init(&s, 127000);
	CHECK_EQ_U64(s.delay_bucket_ns, 1001);
	lgp_stats_delay(&s, 0);
	lgp_stats_delay(&s, 1000);
	lgp_stats_delay(&s, 1001);
	lgp_stats_delay(&s, 127000);
	lgp_stats_delay(&s, UINT64_MAX);
	CHECK_EQ_U64(s.delay_hist[0], 2);
	CHECK_EQ_U64(s.delay_hist[1], 1);
	CHECK_EQ_U64(s.delay_hist[126], 1);
	CHECK_EQ_U64(s.delay_hist[LGP_DELAY_BUCKETS - 1], 1);
	n = lgp_stats_json(&s, "tcp", buf, sizeof(buf));
	CHECK_EQ_U64((uint64_t)n, strlen(buf));
	strcpy(want, ",\"late_hist_us\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"
	       "\"delay_bucket_ns\":1001,\"delay_hist\":[2,1");
	for (i = 2; i < LGP_DELAY_BUCKETS - 2; i++)
		strcat(want, ",0");
	strcat(want, ",1,1]}");
	CHECK(strstr(buf, want) != NULL);
}

int main(void)
{
	test_late_buckets();
	test_late_bounds();
	test_release(lgp_stats_release);
	test_release(lgp_stats_release_owned);
	test_counters();
	test_threads();
	test_names();
	test_json();
	test_delay_hist();
	return check_done("test_stats");
}
