/* SPDX-License-Identifier: MIT */
/*
 * loggp-wire: the DPDK wire emulator (README.md).  Shaped like DPDK's
 * l2fwd: options, EAL, ports, one forwarding loop on the main lcore,
 * signal-driven shutdown that prints the totals.
 *
 * Errors before the ready line are one line on stderr starting with
 * "loggp-wire: " and exit status 1.  EAL log lines go to stderr so that
 * stdout carries only the ready line and the totals JSON.
 */
/* CPU affinity calls (pthread_getaffinity_np, CPU_* macros) are GNU. */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>

#include "wire_buf.h"
#include "wire_conf.h"
#include "wire_ctl.h"
#include "wire_fwd.h"
#include "wire_port.h"
#include "wire_server.h"
#include "wire_state.h"

#define WIRE_ERRLEN 512

static volatile sig_atomic_t wire_quit;

static void wire_signal(int sig)
{
	wire_quit = 1;
}

static void __attribute__((format(printf, 1, 2))) wire_die(const char *fmt, ...)
{
	va_list ap;

	fputs("loggp-wire: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * Check every af_packet vdev names an existing interface before the EAL
 * probes it, so the user gets one clear line instead of EAL noise.
 * Returns the number of --vdev options seen.
 */
static unsigned int wire_check_vdevs(int argc, char **argv)
{
	unsigned int nvdev = 0;
	const char *v, *iface;
	char name[IF_NAMESIZE + 1];
	size_t n;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--vdev=", 7))
			v = argv[i] + 7;
		else if (!strcmp(argv[i], "--vdev") && i + 1 < argc)
			v = argv[++i];
		else
			continue;
		nvdev++;
		if (strncmp(v, "net_af_packet", 13))
			continue;
		iface = strstr(v, "iface=");
		if (!iface)
			wire_die("--vdev=%s has no iface=: expected "
				 "--vdev=net_af_packet0,iface=IFACE", v);
		iface += 6;
		n = strcspn(iface, ",");
		if (!n || n > IF_NAMESIZE - 1)
			wire_die("bad interface name in --vdev=%s: expected 1 "
				 "to %d characters", v, IF_NAMESIZE - 1);
		memcpy(name, iface, n);
		name[n] = '\0';
		if (!if_nametoindex(name))
			wire_die("no such interface '%s' (from --vdev=%s): "
				 "create it first (e.g. loggp testbed up)",
				 name, v);
	}
	return nvdev;
}

/*
 * Starts the control/metrics thread on the CPUs the forwarding lcore does
 * not use (all CPUs the process had before EAL pinned it, minus the
 * lcore's), so a scrape or a set never preempts forwarding.  A thread
 * inherits its creator's mask, so the main thread borrows that mask for
 * the creation and takes its own back.  With no other CPU it shares.
 */
static int wire_start_control(const cpu_set_t *before, struct wire_server **srv,
			      struct wire_state *st, const struct wire_conf *conf,
			      uint16_t *mport, char *err, size_t errlen)
{
	cpu_set_t lcore, ctl = *before;
	int cpu, rc, borrow;

	if (pthread_getaffinity_np(pthread_self(), sizeof(lcore), &lcore))
		CPU_ZERO(&lcore);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &lcore))
			CPU_CLR(cpu, &ctl);
	borrow = CPU_COUNT(&ctl) && CPU_COUNT(&lcore);
	if (borrow)
		pthread_setaffinity_np(pthread_self(), sizeof(ctl), &ctl);
	rc = wire_server_start(srv, st, conf->control_path, conf->metrics_host,
			       conf->metrics_port, mport, err, errlen);
	if (borrow)
		pthread_setaffinity_np(pthread_self(), sizeof(lcore), &lcore);
	return rc;
}

static int wire_write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	int rc = 0;

	if (!fp)
		return -errno;
	if (fputs(text, fp) < 0 || fputc('\n', fp) < 0)
		rc = -EIO;
	if (fclose(fp) && !rc)
		rc = -errno;
	return rc;
}

int main(int argc, char **argv)
{
	struct wire_server *srv = NULL;
	struct rte_mempool *pool = NULL;
	struct wire_state st = { 0 };
	struct wire_fwd fwd = { 0 };
	struct wire_conf conf;
	struct wire_buf totals;
	cpu_set_t cpus_before;
	char err[WIRE_ERRLEN];
	uint16_t *port_ids = NULL, pid, mport = 0;
	unsigned int nports, nvdev, i, started = 0;
	int dd, rc, status = 1;

	for (dd = 1; dd < argc && strcmp(argv[dd], "--"); dd++)
		;
	if (wire_conf_parse(&conf, dd < argc ? argc - dd - 1 : 0,
			    argv + dd + 1, err, sizeof(err)))
		wire_die("%s", err);
	if (conf.help) {
		fputs(wire_conf_usage(), stdout);
		wire_conf_fini(&conf);
		return 0;
	}
	nvdev = wire_check_vdevs(dd, argv);

	signal(SIGINT, wire_signal);
	signal(SIGTERM, wire_signal);
	/* nanosleep in the idle back-off should overshoot by ~1 us, not the
	 * default 50 us of timer slack. */
	prctl(PR_SET_TIMERSLACK, 1000UL);
	rte_openlog_stream(stderr);
	if (sched_getaffinity(0, sizeof(cpus_before), &cpus_before))
		CPU_ZERO(&cpus_before);
	rc = rte_eal_init(dd, argv);
	if (rc < 0)
		wire_die("EAL initialisation failed: %s (see the EAL messages "
			 "above)", rte_strerror(rte_errno));

	nports = rte_eth_dev_count_avail();
	if (!nports) {
		snprintf(err, sizeof(err), "no ports: pass "
			 "--vdev=net_af_packet0,iface=IFACE per port");
		goto err;
	}
	if (nports < nvdev) {
		snprintf(err, sizeof(err), "only %u of %u --vdev ports came up "
			 "(af_packet needs root or CAP_NET_RAW; see the EAL "
			 "messages above)", nports, nvdev);
		goto err;
	}
	if (conf.mode == WIRE_MODE_PAIR && nports % 2) {
		snprintf(err, sizeof(err), "--mode pair needs an even number of "
			 "ports, got %u", nports);
		goto err;
	}
	if (rte_lcore_count() > 1)
		fprintf(stderr, "loggp-wire: forwarding on the main lcore only; "
			"%u other lcores stay idle\n", rte_lcore_count() - 1);
	port_ids = calloc(nports, sizeof(*port_ids));
	if (!port_ids ||
	    wire_state_init(&st, conf.mode, nports, &conf.shape,
			    (uint32_t)conf.queue_capacity)) {
		snprintf(err, sizeof(err), "out of memory");
		goto err;
	}
	i = 0;
	RTE_ETH_FOREACH_DEV(pid) {
		port_ids[i] = pid;
		rte_eth_dev_get_name_by_port(pid, st.ports[i].name);
		i++;
	}
	pool = wire_pool_create(nports, (uint32_t)conf.queue_capacity, err,
				sizeof(err));
	if (!pool)
		goto err;
	for (started = 0; started < nports; started++)
		if (wire_port_start(port_ids[started], pool, err, sizeof(err)))
			goto err;
	wire_state_publish_dist(&st, conf.dist);	/* the state's now */
	conf.dist = NULL;
	if (wire_fwd_init(&fwd, &st, port_ids, conf.seed, conf.jitter_reorder,
			  conf.idle_sleep_ns, &wire_quit)) {
		snprintf(err, sizeof(err), "out of memory for %u delay lines of "
			 "%llu packets", nports,
			 (unsigned long long)conf.queue_capacity);
		goto err;
	}
	if (wire_start_control(&cpus_before, &srv, &st, &conf, &mport, err,
			       sizeof(err)))
		goto err;
	if (conf.metrics_host[0])
		fprintf(stderr, "loggp-wire: metrics at http://%s:%u/metrics\n",
			conf.metrics_host, mport);
	printf("loggp-wire: ready ports=%u\n", nports);
	fflush(stdout);

	wire_fwd_loop(&fwd);

	wire_fwd_fini(&fwd);
	wire_server_stop(srv);
	srv = NULL;
	wire_buf_init(&totals);
	wire_ctl_totals_json(&st, &totals);
	printf("%s\n", wire_buf_str(&totals));
	fflush(stdout);
	status = 0;
	if (conf.stats_json) {
		rc = wire_write_file(conf.stats_json, wire_buf_str(&totals));
		if (rc) {
			fprintf(stderr, "loggp-wire: cannot write --stats-json "
				"%s: %s\n", conf.stats_json, strerror(-rc));
			status = 1;
		}
	}
	wire_buf_fini(&totals);
	goto out;
err:
	fprintf(stderr, "loggp-wire: %s\n", err);
	wire_server_stop(srv);
	wire_fwd_fini(&fwd);
out:
	while (started)
		wire_port_stop(port_ids[--started]);
	rte_mempool_free(pool);
	wire_state_fini(&st);
	free(port_ids);
	wire_conf_fini(&conf);
	rte_eal_cleanup();
	return status;
}
