/* SPDX-License-Identifier: MIT */
/*
 * fi_conform -p PROVIDER [-t TIMEOUT_S] [-c CASE]... [-l]
 *
 * Runs every case (or those named with -c) in a child process of its own
 * and prints one JSON line: {"provider":..., "cases":{NAME:{"result":
 * "pass"|"skip"|"fail", "why":...}}}.  A child that crashes, is killed by
 * a sanitizer or outlives TIMEOUT_S (default 60) fails its case with the
 * signal or "timeout" named.  Exit 0 only if no case failed; 2 on bad
 * usage.
 */
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conform.h"

extern char cf_reason[512];

static const struct cf_case *const cf_tables[] = {
	cf_msg_cases, cf_rma_cases, cf_av_cases, cf_wait_cases, cf_life_cases,
	cf_select_cases, cf_signal_cases, cf_event_cases,
};

#define CF_NTABLES	(sizeof(cf_tables) / sizeof(cf_tables[0]))
/* Cases -c may name: test_conform.py names every case the bare provider ran. */
#define CF_ONLY_MAX	256

/* Exit status of a child whose case was skipped. */
#define CF_EXIT_SKIP	77

static void cf_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char) *s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/*
 * The child: runs the case, sends the reason up the pipe, exits.  Only a
 * pass closed every object, so only a pass runs the exit handlers, where
 * a leak checker looks.
 */
static void cf_child(const struct cf_case *c, const char *prov, int fd,
		     int timeout_s)
{
	int result;
	ssize_t w;

	alarm((unsigned) timeout_s);
	result = c->run(prov);
	w = write(fd, cf_reason, strlen(cf_reason));
	(void) w;
	close(fd);
	if (result == CF_PASS)
		exit(0);
	_exit(result == CF_SKIP ? CF_EXIT_SKIP : 1);
}

/*
 * A child that skipped, failed or was killed closed nothing: its shm
 * regions (named cf-PID-..., cf_pair.c) stay in /dev/shm unless removed.
 */
static void cf_shm_clean(pid_t pid)
{
	char pattern[64];
	glob_t g;
	size_t i;

	snprintf(pattern, sizeof(pattern), "/dev/shm/cf-%d-*", (int) pid);
	if (glob(pattern, 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++)
		unlink(g.gl_pathv[i]);
	globfree(&g);
}

/* Runs one case in a child; returns its result, *why its reason. */
static int cf_run_one(const struct cf_case *c, const char *prov, int timeout_s,
		      char *why, size_t len)
{
	int fds[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(fds))
		return snprintf(why, len, "pipe: %s", strerror(errno)), CF_FAIL;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return snprintf(why, len, "fork: %s", strerror(errno)), CF_FAIL;
	if (!pid) {
		close(fds[0]);
		cf_child(c, prov, fds[1], timeout_s);
	}
	close(fds[1]);
	while ((n = read(fds[0], why + got, len - 1 - (size_t) got)) > 0)
		got += n;
	why[got] = 0;
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	cf_shm_clean(pid);
	if (WIFSIGNALED(status)) {
		snprintf(why + got, len - (size_t) got, "%s%s",
			 got ? "; " : "", WTERMSIG(status) == SIGALRM ?
			 "timeout: the case hung" : strsignal(WTERMSIG(status)));
		return CF_FAIL;
	}
	if (WEXITSTATUS(status) == 0)
		return CF_PASS;
	if (WEXITSTATUS(status) == CF_EXIT_SKIP)
		return CF_SKIP;
	if (!got)
		snprintf(why, len, "exit status %d without a reason: a crash "
			 "caught by libfabric's handler or a sanitizer report "
			 "(see stderr)", WEXITSTATUS(status));
	return CF_FAIL;
}

/*
 * libfabric loads its providers in a process's first fi_getinfo, and loading
 * the verbs provider reads /proc/kallsyms twice whether or not the host has
 * an RDMA device (about 0.2 s of system time a process on a 6.1 kernel, most
 * of what a case cost).  Loaded once here, before the cases fork; each case
 * still opens its own fabric, domain and endpoints.
 */
static void cf_load_providers(const char *prov)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	if (!hints)
		return;
	hints->fabric_attr->prov_name = strdup(prov);
	if (!fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info))
		fi_freeinfo(info);
	fi_freeinfo(hints);
}

static bool cf_selected(const char *name, char **only, int nonly)
{
	int i;

	if (!nonly)
		return true;
	for (i = 0; i < nonly; i++)
		if (!strcmp(only[i], name))
			return true;
	return false;
}

static void cf_usage(void)
{
	fprintf(stderr, "usage: fi_conform -p PROVIDER [-t TIMEOUT_S] "
		"[-c CASE]... [-l]\n");
}

int main(int argc, char **argv)
{
	static const char *const results[] = { "pass", "skip", "fail" };
	const char *prov = NULL;
	char *only[CF_ONLY_MAX], why[1024];
	int nonly = 0, timeout_s = 60, opt, result, failed = 0;
	bool list = false, first = true;
	const struct cf_case *c;
	size_t t;

	while ((opt = getopt(argc, argv, "p:t:c:l")) != -1) {
		switch (opt) {
		case 'p': prov = optarg; break;
		case 't': timeout_s = atoi(optarg); break;
		case 'c':
			if (nonly == CF_ONLY_MAX)
				return cf_usage(), 2;
			only[nonly++] = optarg;
			break;
		case 'l': list = true; break;
		default: return cf_usage(), 2;
		}
	}
	if (list) {
		for (t = 0; t < CF_NTABLES; t++)
			for (c = cf_tables[t]; c->name; c++)
				printf("%s\n", c->name);
		return 0;
	}
	if (!prov || timeout_s <= 0 || optind != argc)
		return cf_usage(), 2;
	cf_load_providers(prov);
	printf("{\"provider\":");
	cf_json_str(prov);
	printf(",\"cases\":{");
	for (t = 0; t < CF_NTABLES; t++) {
		for (c = cf_tables[t]; c->name; c++) {
			if (!cf_selected(c->name, only, nonly))
				continue;
			result = cf_run_one(c, prov, timeout_s, why, sizeof(why));
			failed += result == CF_FAIL;
			printf("%s", first ? "" : ",");
			cf_json_str(c->name);
			printf(":{\"result\":\"%s\",\"why\":", results[result]);
			cf_json_str(why);
			printf("}");
			first = false;
		}
	}
	printf("}}\n");
	return failed ? 1 : 0;
}
