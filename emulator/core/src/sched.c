/* SPDX-License-Identifier: MIT */
/* Knobs over time (lgp/sched.h). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lgp/env.h"
#include "lgp/sched.h"

#define SCHED_FORMS	"'TIME KNOB VALUE' (e.g. '2s latency 200us') or 'start UNIX_NS' before them"
#define SCHED_LINE_MAX	512

struct sched_ctx {
	struct lgp_sched *s;
	const char *path;
	unsigned line;
	unsigned given;		/* knobs named by the current step */
	uint64_t last_at;	/* the current step's time */
	bool stepped;		/* a TIME KNOB VALUE line was read */
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4)))
static int sched_fail(struct sched_ctx *c, int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(c->err, c->errlen, "line %u of %s '%.120s': ", c->line,
		     lgp_setting_env(LGP_SETTING_SCHEDULE), c->path);
	if (n > 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* The knob names, comma-separated, for an error line. */
static void sched_knob_names(char *buf, size_t len)
{
	size_t pos = 0;
	int k, n;

	buf[0] = '\0';
	for (k = 0; k < LGP_KNOB_COUNT && pos < len; k++) {
		n = snprintf(buf + pos, len - pos, "%s%s", k ? ", " : "", lgp_knob_name(k));
		pos += n > 0 ? (size_t)n : len;
	}
}

/* Splits line into at most 3 blank-separated words; returns how many, 4 for more. */
static int sched_words(char *line, char **w)
{
	int n = 0;

	for (;;) {
		while (*line == ' ' || *line == '\t' || *line == '\r')
			*line++ = '\0';
		if (!*line)
			return n;
		if (n == 3)
			return 4;
		w[n++] = line;
		while (*line && *line != ' ' && *line != '\t' && *line != '\r')
			line++;
	}
}

static int sched_start(struct sched_ctx *c, const char *text)
{
	char echo[LGP_ECHO_MAX + 1];
	const char *p;
	char *end;

	lgp_echo(echo, sizeof(echo), text);
	if (c->stepped || c->s->has_start)
		return sched_fail(c, -EINVAL, "start '%s' after a step or a start: expected %s",
				  echo, SCHED_FORMS);
	for (p = text; isdigit((unsigned char)*p); p++)
		;
	errno = 0;
	c->s->start_unix_ns = strtoull(text, &end, 10);
	if (p == text || *p || errno)
		return sched_fail(c, -EINVAL, "bad start '%s': expected %s", echo,
				  "nanoseconds since the epoch (CLOCK_REALTIME), a whole number");
	c->s->has_start = true;
	return 0;
}

/* A new step at at_ns, starting from the last step's knobs. */
static int sched_new_step(struct sched_ctx *c, uint64_t at_ns)
{
	struct lgp_sched *s = c->s;

	if (s->steps == LGP_SCHED_MAX_STEPS) {
		return sched_fail(c, -EINVAL, "too many steps: expected at most %d times",
				  LGP_SCHED_MAX_STEPS);
	}
	s->step[s->steps] = s->step[s->steps - 1];
	s->step[s->steps].at_ns = at_ns;
	s->steps++;
	c->given = 0;
	c->last_at = at_ns;
	return 0;
}

static int sched_set(struct sched_ctx *c, char **w)
{
	char echo[LGP_ECHO_MAX + 1], names[128];
	enum lgp_knob first, second;
	uint64_t at, v;
	int k, ret;

	lgp_echo(echo, sizeof(echo), w[0]);
	if (lgp_knob_parse(LGP_KNOB_LATENCY, w[0], &at, NULL, 0))
		return sched_fail(c, -EINVAL, "bad time '%s': expected %s", echo,
				  lgp_knob_forms(LGP_KNOB_LATENCY));
	if (at < c->last_at)
		return sched_fail(c, -EINVAL, "time '%s' comes before the previous step's: "
				  "expected times in order", echo);
	k = lgp_knob_lookup(w[1]);
	if (k < 0) {
		lgp_echo(echo, sizeof(echo), w[1]);
		sched_knob_names(names, sizeof(names));
		return sched_fail(c, -EINVAL, "unknown knob '%s': expected one of %s", echo, names);
	}
	if (at > c->last_at) {
		ret = sched_new_step(c, at);
		if (ret)
			return ret;
	}
	ret = lgp_knob_parse(k, w[2], &v, NULL, 0);
	if (ret) {
		lgp_echo(echo, sizeof(echo), w[2]);
		return sched_fail(c, ret, "bad value '%s' for %s: expected %s%s", echo,
				  lgp_knob_name(k), lgp_knob_forms(k),
				  ret == -ERANGE ? " (out of range)" : "");
	}
	c->given |= LGP_KNOB_BIT(k);
	c->stepped = true;
	if (lgp_knob_conflict(c->given, &first, &second))
		return sched_fail(c, -EINVAL, "%s and %s in one step: expected one of them",
				  lgp_knob_name(first), lgp_knob_name(second));
	lgp_params_set(&c->s->step[c->s->steps - 1].params, k, v);
	return 0;
}

static int sched_line(struct sched_ctx *c, char *line)
{
	char *w[3];
	int n;

	if (*line == '#')
		return 0;
	n = sched_words(line, w);
	if (!n)
		return 0;
	if (n == 2 && !strcmp(w[0], "start"))
		return sched_start(c, w[1]);
	if (n != 3)
		return sched_fail(c, -EINVAL, "expected %s", SCHED_FORMS);
	return sched_set(c, w);
}

static void sched_peak(struct lgp_sched *s)
{
	const uint64_t *v;
	uint64_t *peak = (uint64_t *)&s->peak;
	size_t i, n = sizeof(s->peak) / sizeof(uint64_t);
	uint32_t k;

	for (k = 0; k < s->steps; k++) {
		v = (const uint64_t *)&s->step[k].params;
		for (i = 0; i < n; i++)
			if (v[i] > peak[i])
				peak[i] = v[i];
	}
}

int lgp_sched_load(struct lgp_sched *s, const char *path,
		   const struct lgp_params *base, char *err, size_t errlen)
{
	struct sched_ctx c = { .s = s, .path = path, .err = err, .errlen = errlen };
	struct lgp_sched_step *shrunk;
	char line[SCHED_LINE_MAX];
	int ret = 0;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s '%.120s': %s (expected a file of lines %s)",
			 lgp_setting_env(LGP_SETTING_SCHEDULE), path, strerror(errno),
			 SCHED_FORMS);
		return ret;
	}
	s->step = calloc(LGP_SCHED_MAX_STEPS, sizeof(*s->step));
	if (!s->step) {
		fclose(f);
		snprintf(err, errlen, "out of memory for %s", lgp_setting_env(LGP_SETTING_SCHEDULE));
		return -ENOMEM;
	}
	s->step[0].params = *base;
	s->steps = 1;
	while (!ret && fgets(line, sizeof(line), f)) {
		c.line++;
		if (!strchr(line, '\n') && !feof(f)) {
			ret = sched_fail(&c, -EINVAL, "too long: expected %s", SCHED_FORMS);
			break;
		}
		line[strcspn(line, "\n")] = '\0';
		ret = sched_line(&c, line);
	}
	fclose(f);
	if (ret) {
		lgp_sched_fini(s);
		return ret;
	}
	sched_peak(s);
	/* The file is read into room for the most steps; keep what it used. */
	shrunk = realloc(s->step, s->steps * sizeof(*s->step));
	if (shrunk)
		s->step = shrunk;
	return 0;
}

void lgp_sched_fini(struct lgp_sched *s)
{
	free(s->step);
	memset(s, 0, sizeof(*s));
}

int64_t lgp_sched_origin(const struct lgp_sched *s, uint64_t now_ns,
			 uint64_t realtime_ns)
{
	if (!s->has_start)
		return (int64_t)now_ns;
	return (int64_t)now_ns - (int64_t)(realtime_ns - s->start_unix_ns);
}

uint64_t lgp_sched_due(const struct lgp_sched *s, int64_t origin, uint32_t k)
{
	int64_t at;

	if (k >= s->steps)
		return UINT64_MAX;
	at = origin + (int64_t)s->step[k].at_ns;
	return at < 0 ? 0 : (uint64_t)at;
}

uint32_t lgp_sched_step_at(const struct lgp_sched *s, int64_t origin, uint32_t k,
			   uint64_t now_ns)
{
	while (k + 1 < s->steps && lgp_sched_due(s, origin, k + 1) <= now_ns)
		k++;
	return k;
}
