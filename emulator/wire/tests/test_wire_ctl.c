/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the control protocol: request handling on a real
 * wire_state (well-formed requests and a corpus of malformed ones), the knob hand-over grace period, the
 * metrics text, and the control thread serving a real Unix socket and
 * HTTP endpoint.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "wire_ctl.h"
#include "wire_server.h"
#include "wire_state.h"

static char err[512];

/* A packet of 100 bytes that arrived at 0, due at release_ns, sent at now_ns. */
static void tx(struct wire_stats *s, uint64_t release_ns, uint64_t now_ns)
{
	struct lgp_dq_slot e = { .release_ns = release_ns, .bytes = 100 };

	wire_stats_tx(s, &e, now_ns);
}

static struct wire_buf out;

static const char *req(struct wire_state *st, const char *line)
{
	wire_ctl_handle(st, line, strlen(line), &out);
	CHECK(!strchr(wire_buf_str(&out), '\n'));
	return wire_buf_str(&out);
}

#define CHECK_HAS(hay, needle) do {					\
	const char *h_ = (hay);						\
	if (!CHECK(strstr(h_, needle) != NULL))				\
		fprintf(stderr, "    '%s' lacks '%s'\n", h_, needle);	\
} while (0)

/* dist requests refused, each with its line; nothing changes */
static const char *const bad_dist[][2] = {
	{ "{\"cmd\":\"dist\",\"latency_dist\":\"gauss:1us\"}",
	  "{\"ok\":false,\"error\":\"bad value 'gauss:1us' for latency_dist: "
	  "expected constant, uniform:TIME," },
	{ "{\"cmd\":\"dist\",\"latency_corr\":\"0.5\"}",
	  "bad value '0.5' for latency_corr: expected it with a latency_dist "
	  "other than constant" },
	{ "{\"cmd\":\"dist\",\"seed\":\"-1\"}",
	  "bad value '-1' for seed: expected a whole number" },
	{ "{\"cmd\":\"dist\",\"latency_dist\":5}",
	  "latency_dist must be a JSON string, e.g. \\\"normal:20us\\\", not a "
	  "number" },
	{ "{\"cmd\":\"dist\",\"jitter\":\"1us\"}",
	  "unknown key 'jitter' for dist: expected latency_dist, latency_corr, "
	  "seed" },
};

static void test_requests(void)
{
	const char *first;
	unsigned int i;
	struct wire_state st;
	struct wire_shape def, s;

	wire_shape_default(&def);
	CHECK_EQ_INT(wire_state_init(&st, WIRE_MODE_SWITCH, 2, &def, 8192), 0);
	snprintf(st.ports[0].name, sizeof(st.ports[0].name), "net_af_packet0");

	CHECK_HAS(req(&st, "{\"cmd\":\"get\"}"),
		  "{\"ok\":true,\"mode\":\"switch\",\"latency_dist\":\"constant\","
		  "\"latency_corr\":null,\"seed\":1,\"pairs\":0,\"ports\":[{\"port\":0,"
		  "\"name\":\"net_af_packet0\",\"latency_ns\":0,");
	CHECK_HAS(wire_buf_str(&out), "\"loss\":0.0}");
	CHECK_HAS(wire_buf_str(&out), "{\"port\":1,\"name\":\"port1\"");
	/* a distribution replaced live, all or nothing, and reported */
	CHECK_HAS(req(&st, "{\"cmd\":\"dist\",\"latency_dist\":\"normal:20us\","
		      "\"latency_corr\":\"0.25\",\"seed\":7}"),
		  "{\"ok\":true,\"latency_dist\":\"normal:20us\","
		  "\"latency_corr\":\"0.25\",\"seed\":7}");
	CHECK_EQ_INT(wire_state_dist(&st)->dist.shape, LGP_DIST_NORMAL);
	CHECK_EQ_U64(wire_state_dist(&st)->gen, 1);
	CHECK_HAS(req(&st, "{\"cmd\":\"get\"}"),
		  "\"latency_dist\":\"normal:20us\",\"latency_corr\":\"0.25\","
		  "\"seed\":7,\"pairs\":0,\"ports\":[");
	for (i = 0; i < sizeof(bad_dist) / sizeof(bad_dist[0]); i++)
		CHECK_HAS(req(&st, bad_dist[i][0]), bad_dist[i][1]);
	CHECK_STR(wire_state_dist(&st)->spec, "normal:20us");	/* unchanged */
	CHECK_HAS(req(&st, "{\"cmd\":\"dist\"}"),
		  "{\"ok\":true,\"latency_dist\":\"constant\","
		  "\"latency_corr\":null,\"seed\":1}");
	CHECK_EQ_U64(wire_state_dist(&st)->gen, 2);	/* refused ones count not */

	/* one port, several knobs */
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"port\":1,\"latency\":\"1ms\","
		      "\"bandwidth\":\"100Mbit/s\",\"queue_pkts\":1000,"
		      "\"loss\":0.5,\"burst\":3000}"),
		  "{\"ok\":true,\"ports\":[{\"port\":1,");
	CHECK_HAS(wire_buf_str(&out), "\"latency_ns\":1000000");
	wire_state_get(&st.ports[1], &s);
	CHECK_EQ_U64(s.latency_ns, 1000000);
	CHECK_EQ_U64(s.bulk_gap_fs, 80000000);
	CHECK_EQ_U64(s.queue_pkts, 1000);
	CHECK_EQ_U64(s.burst_bytes, 3000);
	CHECK(s.loss == 0.5);
	wire_state_get(&st.ports[0], &s);
	CHECK_EQ_U64(s.latency_ns, 0);

	/* all ports; untouched knobs keep their value */
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"jitter\":\"5us\"}"),
		  "\"ok\":true");
	wire_state_get(&st.ports[1], &s);
	CHECK_EQ_U64(s.jitter_ns, 5000);
	CHECK_EQ_U64(s.latency_ns, 1000000);
	wire_state_get(&st.ports[0], &s);
	CHECK_EQ_U64(s.jitter_ns, 5000);

	/* errors: connection-level state is untouched */
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"port\":5,\"latency\":\"1ms\"}"),
		  "{\"ok\":false,\"error\":\"port 5 out of range: this wire has "
		  "ports 0 to 1\"}");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"port\":-1}"), "out of range");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"port\":\"1\"}"),
		  "port must be an integer");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"latency\":\"-5us\"}"),
		  "bad value '-5us' for latency: expected <number>{ns|us|ms|s}");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"latency\":5}"),
		  "latency must be a string with a unit");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"queue_pkts\":\"5\"}"),
		  "queue_pkts must be a JSON number");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"queue_pkts\":9000}"),
		  "queue_pkts 9000 exceeds the delay line of port 0");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"queue_pkts\":1.5}"),
		  "bad value '1.5' for queue_pkts");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"bandwidth\":\"1Gbit/s\","
		      "\"bulk_gap\":\"1ns/B\"}"), "not both");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"overhead\":\"1us\"}"),
		  "unknown key 'overhead' for set: expected port, latency,");
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"loss\":2}"),
		  "bad value '2' for loss");
	CHECK_HAS(req(&st, "{\"cmd\":\"reboot\"}"),
		  "unknown cmd 'reboot': expected set, get, dist, pairs or stats");
	CHECK_HAS(req(&st, "{\"port\":1}"), "missing \\\"cmd\\\"");
	CHECK_HAS(req(&st, "{\"cmd\":\"get\",\"port\":1}"),
		  "unknown key 'port' for get");
	CHECK_HAS(req(&st, "latency=1ms"), "request is not a flat JSON object");
	/* a set with one bad knob changes nothing */
	CHECK_HAS(req(&st, "{\"cmd\":\"set\",\"latency\":\"7ms\","
		      "\"gap\":\"x\"}"), "\"ok\":false");
	wire_state_get(&st.ports[0], &s);
	CHECK_EQ_U64(s.latency_ns, 0);

	wire_stat_add(&st.ports[1].stats.rx_pkts, 3);
	tx(&st.ports[1].stats, 0, 500);		/* undelayed, held <= 1 us */
	tx(&st.ports[1].stats, 1000000, 2000000);	/* held 2 ms, 1 ms late */
	wire_stat_add(&st.ports[1].stats.drop_queue, 4);
	CHECK_HAS(req(&st, "{\"cmd\":\"stats\"}"),
		  "{\"port\":1,\"name\":\"port1\",\"rx_pkts\":3,\"rx_bytes\":0,"
		  "\"tx_pkts\":2,\"tx_bytes\":200,\"drops\":{\"queue\":4,"
		  "\"loss\":0,\"tx\":0,\"rx\":0}");
	CHECK_HAS(wire_buf_str(&out), "\"delay_hist_us\":{\"le_1\":1,"
		  "\"le_10\":1,\"le_100\":1,\"le_1000\":1,\"le_10000\":2,"
		  "\"inf\":2},\"releases\":1,\"late_ns\":1000000,"
		  "\"late_max_ns\":1000000,\"late_over_10us\":1,"
		  "\"early_releases\":0,\"late_hist_us\":[0,0,0,0,0,0,0,0,0,0,"
		  "1,0,0,0,0,0]}");
	/* drawn delays (wire_egress_set_dist()) follow, once a port has any */
	lgp_stats_delay_init(&st.ports[1].stats.late, 127 * 1000 - 1);
	lgp_stats_delay(&st.ports[1].stats.late, 3500);
	st.ports[1].stats.delay_latency_ns = 100000;
	CHECK_HAS(req(&st, "{\"cmd\":\"stats\"}"),
		  "1,0,0,0,0,0],\"delay_bucket_ns\":1000,\"delay_hist\":[0,0,0,1,0,");
	CHECK_HAS(wire_buf_str(&out), ",0,0],\"delay_latency_ns\":100000,"
		  "\"delay_starts\":0}]");
	/* port 0 drew none: only port 1 has the fields */
	first = strstr(wire_buf_str(&out), "\"delay_bucket_ns\"");
	CHECK(first && !strstr(first + 1, "\"delay_bucket_ns\""));

	wire_buf_reset(&out);
	wire_ctl_metrics(&st, &out);
	CHECK_HAS(wire_buf_str(&out), "# TYPE loggp_wire_rx_packets_total "
		  "counter\nloggp_wire_rx_packets_total{port=\"0\"} 0\n"
		  "loggp_wire_rx_packets_total{port=\"1\"} 3\n");
	CHECK_HAS(wire_buf_str(&out),
		  "loggp_wire_drops_total{port=\"1\",cause=\"queue\"} 4\n");
	CHECK_HAS(wire_buf_str(&out), "loggp_wire_added_delay_seconds_bucket"
		  "{port=\"1\",le=\"0.001\"} 1\n");
	CHECK_HAS(wire_buf_str(&out), "loggp_wire_added_delay_seconds_bucket"
		  "{port=\"1\",le=\"+Inf\"} 2\n");
	CHECK_HAS(wire_buf_str(&out), "# TYPE loggp_wire_release_late_seconds "
		  "histogram\n");
	CHECK_HAS(wire_buf_str(&out), "loggp_wire_release_late_seconds_bucket"
		  "{port=\"1\",le=\"0.000512\"} 0\n"
		  "loggp_wire_release_late_seconds_bucket"
		  "{port=\"1\",le=\"0.001024\"} 1\n");
	CHECK_HAS(wire_buf_str(&out), "loggp_wire_release_late_seconds_bucket"
		  "{port=\"1\",le=\"0.016384\"} 1\n"
		  "loggp_wire_release_late_seconds_bucket"
		  "{port=\"1\",le=\"+Inf\"} 1\n"
		  "loggp_wire_release_late_seconds_sum{port=\"1\"} 0.001000000\n"
		  "loggp_wire_release_late_seconds_count{port=\"1\"} 1\n");
	CHECK_HAS(wire_buf_str(&out), "loggp_wire_release_late_seconds_bucket"
		  "{port=\"0\",le=\"1e-06\"} 0\n");
	CHECK_HAS(wire_buf_str(&out),
		  "loggp_wire_release_late_max_seconds{port=\"1\"} 0.001000000\n");
	CHECK_HAS(wire_buf_str(&out),
		  "loggp_wire_release_late_over_10us_total{port=\"1\"} 1\n");
	CHECK_HAS(wire_buf_str(&out),
		  "loggp_wire_early_releases_total{port=\"1\"} 0\n");
	CHECK_HAS(wire_buf_str(&out),
		  "loggp_wire_latency_seconds{port=\"1\"} 0.001000000\n");
	CHECK_HAS(wire_buf_str(&out),
		  "loggp_wire_bandwidth_bytes_per_second{port=\"1\"} 12500000\n");
	wire_state_fini(&st);
}

#define BAD(text, why)	{ text, sizeof(text) - 1, why }

/*
 * Malformed requests: each is answered with one line, {"ok":false} naming
 * what is wrong, and changes no knob.  Run under LOGGP_SANITIZE for
 * memory errors.
 */
static void test_malformed(void)
{
	static const struct {
		const char *text;
		size_t len;
		const char *why;
	} bad[] = {
		BAD("", "'[' or '{' expected near end of file at byte 0"),
		BAD(" \n\t", "'[' or '{' expected"),
		BAD("latency=1ms", "request is not a flat JSON object: '[' or '{'"),
		/* truncated */
		BAD("{", "string or '}' expected near end of file"),
		BAD("{\"cmd\"", "':' expected"),
		BAD("{\"cmd\":", "unexpected token near end of file"),
		BAD("{\"cmd\":\"se", "premature end of input"),
		BAD("{\"cmd\":\"set\",", "string or '}' expected"),
		BAD("{\"cmd\":\"set\",\"port\":1", "'}' expected"),
		/* not JSON */
		BAD("{\"a\":01}", "invalid token"),
		BAD("{\"a\":-}", "invalid token"),
		BAD("{\"a\":tru}", "invalid token"),
		BAD("{\"a\" 1}", "':' expected"),
		BAD("{\"a\":1,}", "string or '}' expected near '}'"),
		BAD("{cmd:\"get\"}", "string or '}' expected"),
		BAD("{\"cmd\":\"get\"} x", "end of file expected near 'x'"),
		BAD("{\"cmd\":\"get\"}{}", "end of file expected"),
		/* not flat, or the wrong types */
		BAD("[{\"cmd\":\"get\"}]", "expected '{' at byte 0"),
		BAD("{\"cmd\":\"set\",\"port\":{\"b\":1}}",
		    "nested objects and arrays are not accepted ('port')"),
		BAD("{\"cmd\":\"set\",\"latency\":[\"1ms\"]}", "nested"),
		BAD("{\"cmd\":1}", "missing \\\"cmd\\\""),
		BAD("{\"cmd\":null}", "missing \\\"cmd\\\""),
		BAD("{\"cmd\":\"set\",\"port\":true}",
		    "port must be an integer from 0 to 1, not a boolean"),
		BAD("{\"cmd\":\"set\",\"port\":null}", "not null"),
		BAD("{\"cmd\":\"set\",\"port\":1.0}", "port 1.0 out of range"),
		BAD("{\"cmd\":\"set\",\"loss\":\"0.1\"}",
		    "loss must be a JSON number"),
		BAD("{\"cmd\":\"set\",\"queue_pkts\":1.0}",
		    "bad value '1.0' for queue_pkts"),
		/* huge numbers */
		BAD("{\"cmd\":\"set\",\"port\":99999999999999999999999}",
		    "too big integer"),
		BAD("{\"cmd\":\"set\",\"port\":9223372036854775807}",
		    "port 9223372036854775807 out of range"),
		BAD("{\"cmd\":\"set\",\"loss\":1e999}", "real number overflow"),
		BAD("{\"cmd\":\"set\",\"burst\":-1}", "bad value '-1' for burst"),
		BAD("{\"cmd\":\"set\",\"latency\":\"99999999999999999999s\"}",
		    "latency"),
		/* NUL bytes, escaped or raw */
		BAD("{\"cmd\":\"get\"}\0", "end of file expected"),
		BAD("{\"cmd\":\"g\0et\"}", "control character 0x0"),
		BAD("\0{\"cmd\":\"get\"}", "'[' or '{' expected"),
		BAD("{\"cmd\":\"get\\u0000\"}", "\\\\u0000 is not allowed"),
		/* not UTF-8 */
		BAD("{\"cmd\":\"\xff\xfe\"}", "unable to decode byte 0xff"),
		BAD("{\"cmd\":\"\xc0\xaf\"}", "unable to decode byte 0xc0"),
		BAD("{\"\xe2\x82\":1}", "unable to decode byte"),
		BAD("{\"cmd\":\"\\ud800\"}", "invalid Unicode"),
		/* duplicate keys */
		BAD("{\"cmd\":\"get\",\"cmd\":\"get\"}", "duplicate object key"),
		BAD("{\"cmd\":\"set\",\"latency\":\"1ms\",\"latency\":\"2ms\"}",
		    "duplicate object key"),
	};
	static char deep[100000 + 16];
	struct wire_state st;
	struct wire_shape def, s;
	const char *r;
	size_t i;

	wire_shape_default(&def);
	CHECK_EQ_INT(wire_state_init(&st, WIRE_MODE_SWITCH, 2, &def, 8192), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wire_ctl_handle(&st, bad[i].text, bad[i].len, &out);
		r = wire_buf_str(&out);
		CHECK(!strchr(r, '\n'));
		CHECK_HAS(r, "{\"ok\":false,\"error\":\"");
		CHECK_HAS(r, bad[i].why);
	}
	/* deep nesting: past jansson's depth limit, and far past it */
	memcpy(deep, "{\"a\":", 5);
	memset(deep + 5, '[', 2100);
	CHECK_HAS(req(&st, deep), "maximum parsing depth reached");
	memset(deep + 5, '[', sizeof(deep) - 6);
	CHECK_HAS(req(&st, deep), "maximum parsing depth reached");
	for (i = 0; i < 2; i++) {
		wire_state_get(&st.ports[i], &s);
		CHECK_EQ_U64(s.latency_ns, def.latency_ns);
		CHECK_EQ_U64(s.queue_pkts, def.queue_pkts);
		CHECK(s.loss == def.loss);
	}
	/* escapes are decoded */
	CHECK_HAS(req(&st, "{\"cmd\":\"s\\u0065t\",\"latency\":\"1\\u006ds\"}"),
		  "\"ok\":true");
	wire_state_get(&st.ports[0], &s);
	CHECK_EQ_U64(s.latency_ns, 1000000);
	wire_state_fini(&st);
}

/* A stand-in forwarding lcore: reads knobs and ends iterations. */
static void *fake_lcore(void *arg)
{
	struct wire_state *st = arg;
	volatile uint64_t sink = 0;

	while (atomic_load(&st->lcore_active)) {
		sink += wire_state_shape(&st->ports[0])->latency_ns;
		wire_state_quiescent(st);
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_grace(void)
{
	struct wire_state st;
	struct wire_shape def, s;
	pthread_t th;
	double t0;
	int i;

	wire_shape_default(&def);
	CHECK_EQ_INT(wire_state_init(&st, WIRE_MODE_PAIR, 2, &def, 100), 0);
	atomic_store(&st.lcore_active, 1);
	CHECK_EQ_INT(pthread_create(&th, NULL, fake_lcore, &st), 0);
	for (i = 0; i < 1000; i++) {
		s = def;
		s.latency_ns = (uint64_t)i;
		CHECK_EQ_INT(wire_state_publish(&st, 0, &s), 0);
	}
	CHECK(st.retired == NULL);	/* every old struct was freed */
	atomic_store(&st.lcore_active, 0);
	pthread_join(th, NULL);
	wire_state_get(&st.ports[0], &s);
	CHECK_EQ_U64(s.latency_ns, 999);

	/* an lcore that never ends its iteration: retire, do not free */
	atomic_store(&st.lcore_active, 1);
	t0 = now_s();
	CHECK_EQ_INT(wire_state_publish(&st, 1, &def), 0);
	CHECK(now_s() - t0 >= 0.9);
	CHECK(st.retired != NULL);
	atomic_store(&st.lcore_active, 0);
	CHECK_EQ_INT(wire_state_publish(&st, 9, &def), -EINVAL);
	wire_state_fini(&st);
}

/* Read one line (up to '\n') with a 5 s receive timeout. */
static int read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < len) {
		r = read(fd, buf + n, 1);
		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

static int send_str(int fd, const char *s)
{
	return write(fd, s, strlen(s)) == (ssize_t)strlen(s);
}

static void set_timeout(int fd)
{
	struct timeval tv = { 5, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static int ctl_connect(const struct sockaddr_un *su)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	set_timeout(fd);
	if (connect(fd, (const struct sockaddr *)su, sizeof(*su))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One get on fd: the server has accepted it and counts it active now. */
static int ctl_get(int fd)
{
	static const char get[] = "{\"cmd\":\"get\"}\n";
	char line[4096];

	/* a closed connection fails the check, not the test program */
	return send(fd, get, sizeof(get) - 1, MSG_NOSIGNAL) ==
		       (ssize_t)(sizeof(get) - 1) &&
	       !read_line(fd, line, sizeof(line)) &&
	       strstr(line, "\"ok\":true") != NULL;
}

/*
 * 32 control connections fill the slots: a 33rd is refused while they are
 * busy; once one has idled for 2 s it is closed, told why, and the new
 * client gets its slot.
 */
static void test_idle_control_evicted(const struct sockaddr_un *su)
{
	struct timespec idle = { 2, 200000000 };
	char line[4096];
	int fds[32], fd, i, ok = 1;

	for (i = 0; i < 32; i++) {
		fds[i] = ctl_connect(su);
		ok &= fds[i] >= 0 && ctl_get(fds[i]);
	}
	CHECK(ok);
	fd = ctl_connect(su);
	CHECK(fd >= 0 && !read_line(fd, line, sizeof(line)));
	CHECK(strstr(line, "too many control connections (32 open)") != NULL);
	close(fd);

	nanosleep(&idle, NULL);	/* the stimulus: fds[0] idle past 2 s */
	for (i = 1; i < 32; i++)
		ok &= ctl_get(fds[i]);
	CHECK(ok);
	fd = ctl_connect(su);
	CHECK(fd >= 0 && ctl_get(fd));
	CHECK_EQ_INT(read_line(fds[0], line, sizeof(line)), 0);
	CHECK(strstr(line, "closed after 2 s idle") != NULL);
	CHECK(read(fds[0], line, 1) == 0);
	close(fd);
	for (i = 0; i < 32; i++)
		close(fds[i]);
}

static void test_server(void)
{
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	struct sockaddr_in si = { .sin_family = AF_INET };
	struct wire_server *srv = NULL;
	struct wire_state st;
	struct wire_shape def;
	char line[4096], *resp;
	uint16_t port = 0;
	size_t n = 0;
	ssize_t r;
	int fd, fd2;

	wire_shape_default(&def);
	def.queue_pkts = 64;
	CHECK_EQ_INT(wire_state_init(&st, WIRE_MODE_SWITCH, 2, &def, 64), 0);
	snprintf(su.sun_path, sizeof(su.sun_path), "/tmp/test_wire_ctl.%d/c.sock",
		 (int)getpid());
	if (!CHECK(wire_server_start(&srv, &st, su.sun_path,
						"127.0.0.1", 0, &port, err,
						sizeof(err)) == 0)) {
		fprintf(stderr, "    %s\n", err);
		wire_state_fini(&st);
		return;
	}
	CHECK(port != 0);

	/* two requests on one connection, and a second client at once */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	fd2 = socket(AF_UNIX, SOCK_STREAM, 0);
	set_timeout(fd);
	set_timeout(fd2);
	CHECK_EQ_INT(connect(fd, (struct sockaddr *)&su, sizeof(su)), 0);
	CHECK_EQ_INT(connect(fd2, (struct sockaddr *)&su, sizeof(su)), 0);
	CHECK(send_str(fd, "{\"cmd\":\"set\",\"port\":1,\"latency\":\"2ms\"}\n"
		       "{\"cmd\":\"nope\"}\r\n"));
	CHECK(send_str(fd2, "{\"cmd\":\"get\"}\n"));
	CHECK_EQ_INT(read_line(fd, line, sizeof(line)), 0);
	CHECK(strstr(line, "\"ok\":true") && strstr(line, "2000000"));
	CHECK_EQ_INT(read_line(fd, line, sizeof(line)), 0);
	CHECK(strstr(line, "unknown cmd 'nope'") != NULL);
	CHECK_EQ_INT(read_line(fd2, line, sizeof(line)), 0);
	CHECK(strstr(line, "\"mode\":\"switch\"") != NULL);
	/* the connection stays usable after an error */
	CHECK(send_str(fd, "{\"cmd\":\"stats\"}\n"));
	CHECK_EQ_INT(read_line(fd, line, sizeof(line)), 0);
	CHECK(strstr(line, "\"drops\"") != NULL);
	close(fd);
	close(fd2);

	/* a second server on the same live socket is refused */
	{
		struct wire_server *srv2 = NULL;

		CHECK_EQ_INT(wire_server_start(&srv2, &st, su.sun_path, "", 0,
					       NULL, err, sizeof(err)),
			     -EADDRINUSE);
		CHECK(strstr(err, "in use") != NULL);
	}
	test_idle_control_evicted(&su);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	set_timeout(fd);
	si.sin_port = htons(port);
	si.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ_INT(connect(fd, (struct sockaddr *)&si, sizeof(si)), 0);
	CHECK(send_str(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
	resp = malloc(1 << 16);
	while (resp && n + 1 < (1 << 16) &&
	       (r = read(fd, resp + n, (1 << 16) - 1 - n)) > 0)
		n += (size_t)r;
	if (resp) {
		resp[n] = '\0';
		CHECK(!strncmp(resp, "HTTP/1.0 200 OK\r\n", 17));
		CHECK(strstr(resp, "version=0.0.4") != NULL);
		CHECK(strstr(resp, "loggp_wire_latency_seconds{port=\"1\"} "
			     "0.002000000") != NULL);
	}
	free(resp);
	close(fd);

	wire_server_stop(srv);
	CHECK(access(su.sun_path, F_OK) != 0);	/* socket file removed */
	*strrchr(su.sun_path, '/') = '\0';
	rmdir(su.sun_path);
	wire_state_fini(&st);
}

/* The network's pairs: set, reported, refused whole, taken away. */
static void test_pairs(void)
{
	struct wire_shape def;
	struct wire_state st;
	const struct wire_pair *w;

	wire_shape_default(&def);
	CHECK_EQ_INT(wire_state_init(&st, WIRE_MODE_SWITCH, 3, &def, 16), 0);
	CHECK_HAS(req(&st, "{\"cmd\":\"get\"}"), "\"pairs\":0,");
	CHECK_HAS(req(&st, "{\"cmd\":\"pairs\",\"table\":\"# a network\\n"
		       "ranks 2\\n0 1 50000 0 0\\n1 0 50000 7 0\\n\"}"),
		  "{\"ok\":true,\"pairs\":2}");
	w = wire_pairs_get(wire_state_pairs(&st), 1, 0);
	CHECK(w && w->latency_ns == 50000 && w->gap_ns == 7);
	w = wire_pairs_get(wire_state_pairs(&st), 0, 2);
	CHECK(w && !w->latency_ns && !w->gap_ns && !w->bulk_gap_fs);
	CHECK_HAS(req(&st, "{\"cmd\":\"stats\"}"),
		  "\"pair_pkts\":[0,0,0],\"pair_latency_ns\":[0,0,0]}");
	/* refused: the pairs before stay */
	CHECK_HAS(req(&st, "{\"cmd\":\"pairs\",\"table\":\"ranks 4\\n\"}"),
		  "bad line 1 of pairs 'ranks 4': expected 'ranks N', then lines "
		  "SRC DST LATENCY_NS GAP_NS BULK_GAP_FS (loggp/plan/topology.py "
		  "writes it), N at most this wire's 3 ports");
	CHECK_HAS(req(&st, "{\"cmd\":\"pairs\",\"table\":\"ranks 2\\n0 2 1 0 0\"}"),
		  "bad line 2 of pairs '0 2 1 0 0'");
	CHECK_HAS(req(&st, "{\"cmd\":\"pairs\",\"table\":\"0 1 1 0 0\"}"),
		  "bad line 1 of pairs");
	CHECK_HAS(req(&st, "{\"cmd\":\"pairs\",\"table\":5}"),
		  "table must be a JSON string of lines");
	CHECK_HAS(req(&st, "{\"cmd\":\"pairs\"}"), "missing table for pairs");
	CHECK_HAS(req(&st, "{\"cmd\":\"pairs\",\"table\":\"\",\"x\":1}"),
		  "unknown key 'x' for pairs: expected table");
	CHECK_HAS(req(&st, "{\"cmd\":\"get\"}"), "\"pairs\":2,");
	CHECK_HAS(req(&st, "{\"cmd\":\"pairs\",\"table\":\"\"}"),
		  "{\"ok\":true,\"pairs\":0}");
	CHECK(!wire_state_pairs(&st));
	wire_state_fini(&st);
}

int main(void)
{
	wire_buf_init(&out);
	test_requests();
	test_pairs();
	test_malformed();
	test_grace();
	test_server();
	wire_buf_fini(&out);
	return check_done("test_wire_ctl");
}
