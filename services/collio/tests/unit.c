/*
 * unit.c: collio's pure parts, one ctest case per argument (an MPI
 * singleton each):
 *   flat     every test view of every rank of 1..5 ranks flattened, against
 *            the bytes MPI_Unpack itself fills through the filetype
 *   domains  file domains: a partition of the range, stripe-aligned, rounds
 *   hints    defaults, bad values, the JSON and ROMIO_HINTS files, precedence
 *   json     a corpus of malformed LOGGP_COLLIO_HINTS files: each one error
 *            line naming what is wrong, no hint set, no crash
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cio.h"
#include "cio_views.h"

static int failures;

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);         \
			fprintf(stderr, __VA_ARGS__);                                      \
			fprintf(stderr, "\n");                                             \
			failures++;                                                        \
		}                                                                          \
	} while (0)

/* The filetype's data bytes as MPI places them, as runs in address order. */
static void marker_runs(MPI_Datatype t, struct cio_flat *out)
{
	MPI_Aint tlb, text;
	int size, pos = 0;
	unsigned char *ones, *img;

	MPI_Type_get_true_extent(t, &tlb, &text);
	MPI_Type_size(t, &size);
	ones = malloc(size + 1);
	img = calloc(text + 1, 1);
	memset(ones, 1, size + 1);
	MPI_Unpack(ones, size, &pos, img - tlb, 1, t, MPI_COMM_SELF);
	cio_flat_init(out);
	for (MPI_Aint i = 0; i < text; i++)
		if (img[i])
			cio_flat_append(out, tlb + i, 1);
	free(ones);
	free(img);
}

static void test_flat(void)
{
	for (int np = 1; np <= 5; np++) {
		for (int v = 0; cio_view_names[v]; v++) {
			for (int r = 0; r < np; r++) {
				const char *name = cio_view_names[v];
				struct cio_flat got, want;
				MPI_Datatype t;
				MPI_Offset disp;
				MPI_Aint lb, ext;
				int size;

				cio_view_make(name, r, np, &t, &disp);
				CHECK(!cio_flat_type(t, &got), "%s", name);
				marker_runs(t, &want);
				MPI_Type_size(t, &size);
				MPI_Type_get_extent(t, &lb, &ext);
				CHECK(got.size == size, "%s np=%d r=%d size %lld != %d", name, np,
				      r, (long long)got.size, size);
				CHECK(got.lb == lb && got.extent == ext, "%s extent", name);
				CHECK(got.n == want.n, "%s np=%d r=%d: %zu segments, MPI %zu", name,
				      np, r, got.n, want.n);
				for (size_t i = 0; i < got.n && i < want.n; i++)
					CHECK(got.seg[i].off == want.seg[i].off &&
					      got.seg[i].len == want.seg[i].len,
					      "%s np=%d r=%d segment %zu: %lld+%lld, MPI %lld+%lld",
					      name, np, r, i, (long long)got.seg[i].off,
					      (long long)got.seg[i].len, (long long)want.seg[i].off,
					      (long long)want.seg[i].len);
				cio_flat_free(&got);
				cio_flat_free(&want);
				MPI_Type_free(&t);
			}
		}
	}
}

static void test_view_access(void)
{
	struct cio_view v = { 0 };
	struct cio_flat acc;
	MPI_Datatype t;
	MPI_Offset disp;

	/* rank 1 of 2, "indexed": units 6..7 and 9 of every period of 12 */
	cio_view_make("indexed", 1, 2, &t, &disp);
	CHECK(!cio_view_set(&v, disp, MPI_BYTE, t), "view");
	CHECK(!cio_view_access(&v, 4, 10, &acc), "access");
	/* data bytes 4..13: 4,5 of the first block; 6..8 (unit 9); 9..13 next tile */
	CHECK(acc.n == 3 && acc.seg[0].off == 18 + 4 && acc.seg[0].len == 2 &&
	      acc.seg[1].off == 27 && acc.seg[1].len == 3 && acc.seg[2].off == 36 + 18 &&
	      acc.seg[2].len == 5, "indexed access: %zu segments", acc.n);
	cio_flat_free(&acc);
	cio_view_free(&v);
	MPI_Type_free(&t);
}

static void test_domains(void)
{
	static const int64_t ranges[][2] = { { 0, 1 }, { 5, 100 }, { 4095, 1 << 20 },
					      { 1 << 20, 3 << 20 }, { 7, 8 } };
	static const int64_t units[] = { 0, 1, 4096, 65536 };

	for (size_t ri = 0; ri < sizeof(ranges) / sizeof(ranges[0]); ri++) {
		for (size_t ui = 0; ui < sizeof(units) / sizeof(units[0]); ui++) {
			for (int nagg = 1; nagg <= 6; nagg++) {
				struct cio_domains d;
				int64_t lo = ranges[ri][0], hi = ranges[ri][1], su = units[ui];
				int64_t at = lo, rounds = 0, cb = 1000;

				CHECK(!cio_domains_make(&d, lo, hi, nagg, 5, su, cb), "make");
				CHECK(d.nagg == (nagg > 5 ? 5 : nagg), "nagg %d", d.nagg);
				for (int a = 0; a < d.nagg; a++) {
					int64_t len = d.end[a] - d.start[a];

					CHECK(d.start[a] == at, "domain %d starts at %lld, not %lld",
					      a, (long long)d.start[a], (long long)at);
					CHECK(len >= 0, "domain %d is negative", a);
					CHECK(su <= 1 || d.end[a] == hi || d.end[a] % su == 0,
					      "domain %d ends at %lld, not on a stripe of %lld", a,
					      (long long)d.end[a], (long long)su);
					CHECK(a == 0 || d.agg_rank[a] > d.agg_rank[a - 1], "ranks");
					at = d.end[a];
					if ((len + cb - 1) / cb > rounds)
						rounds = (len + cb - 1) / cb;
				}
				CHECK(at == hi, "domains end at %lld, not %lld", (long long)at,
				      (long long)hi);
				CHECK(d.rounds == rounds, "rounds %lld != %lld", (long long)d.rounds,
				      (long long)rounds);
				cio_domains_free(&d);
			}
		}
	}
}

static void write_bytes(const char *path, const char *text, size_t len)
{
	FILE *fp = fopen(path, "w");

	fwrite(text, 1, len, fp);
	fclose(fp);
}

static void write_file(const char *path, const char *text)
{
	write_bytes(path, text, strlen(text));
}

static void test_hints(void)
{
	char dir[] = "/tmp/collio-unit-XXXXXX", json[64], romio[64];
	struct cio_hints h;
	MPI_Info info;

	cio_hints_default(&h);
	CHECK(!h.handled && h.cache == CIO_CACHE_DISABLE && h.flush == CIO_FLUSH_IMMEDIATE &&
	      h.cb_buffer_size == 16 << 20 && h.ind_wr_buffer_size == 512 << 10 &&
	      h.threads == 1, "defaults");
	CHECK(cio_hints_set(&h, "e10_cache", "maybe") == -EINVAL, "bad e10_cache");
	CHECK(cio_hints_set(&h, "cb_nodes", "0") == -EINVAL, "cb_nodes 0");
	CHECK(cio_hints_set(&h, "cb_buffer_size", "12k") == -EINVAL, "cb_buffer_size 12k");
	cio_hints_default(&h);
	CHECK(!cio_hints_set(&h, "unknown_key", "x") && !h.handled, "unknown key");
	CHECK(!cio_hints_set(&h, "e10_cache_flush_flag", "flush_none") &&
	      h.flush == CIO_FLUSH_NONE && h.handled, "flush_none");

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(json, sizeof(json), "%s/hints.json", dir);
	snprintf(romio, sizeof(romio), "%s/romio", dir);
	write_file(json, "{\"Directory\": [{\"Path\": \"/d/\", \"Hints\": {\"e10_cache\": "
			 "\"enable\", \"cb_nodes\": 3, \"striping_unit\": 4096}}],\n"
			 " \"File\": [{\"Path\": \"/d/f\", \"Hints\": {\"cb_nodes\": 2}},"
			 " {\"Path\": \"/e/f\", \"Hints\": {\"cb_nodes\": 7}}]}");
	write_file(romio, "# system hints\nstriping_unit 8192\ncb_buffer_size 65536\n");
	setenv("LOGGP_COLLIO_HINTS", json, 1);
	setenv("ROMIO_HINTS", romio, 1);
	MPI_Info_create(&info);
	MPI_Info_set(info, "cb_buffer_size", "1024");
	CHECK(!cio_hints_resolve(&h, "/d/f", info), "resolve");
	CHECK(h.handled && h.cache == CIO_CACHE_ENABLE && h.cb_nodes == 2 &&
	      h.striping_unit == 8192 && h.cb_buffer_size == 1024, "precedence: cache %d cb_nodes "
	      "%d su %lld cb %lld", h.cache, h.cb_nodes, (long long)h.striping_unit,
	      (long long)h.cb_buffer_size);
	CHECK(!cio_hints_resolve(&h, "/dx/f", MPI_INFO_NULL) && !h.handled, "other directory");
	write_file(json, "{\"File\": [{\"Path\": \"/d/f\"}]}");
	CHECK(cio_hints_resolve(&h, "/d/f", MPI_INFO_NULL) == -EINVAL, "entry without Hints");
	write_file(json, "{\"File\": [");
	CHECK(cio_hints_resolve(&h, "/d/f", MPI_INFO_NULL) == -EINVAL, "truncated JSON");
	unsetenv("LOGGP_COLLIO_HINTS");
	write_file(romio, "cb_nodes\n");
	CHECK(cio_hints_resolve(&h, "/d/f", MPI_INFO_NULL) == -EINVAL, "ROMIO key alone");
	unsetenv("ROMIO_HINTS");
	MPI_Info_free(&info);
	unlink(json);
	unlink(romio);
	rmdir(dir);
}

/* The hints a JSON file sets, and how many it set. */
struct hint_sink {
	struct cio_hints h;
	int sets;
};

static int sink_set(void *arg, const char *key, const char *value)
{
	struct hint_sink *s = arg;
	int ret = cio_hints_set(&s->h, key, value);

	s->sets += !ret;
	return ret;
}

/*
 * Feeds text as the hints file: cio_json_hints must refuse it with one line
 * on stderr (captured in the file log_fd) that contains why, and set no hint.
 */
static void expect_error(const char *json, const char *text, size_t len, const char *why,
			 int log_fd)
{
	struct hint_sink sink = { .sets = 0 };
	int saved = dup(2), ret;
	char msg[1024];
	ssize_t n;

	write_bytes(json, text, len);
	/* stderr shares log_fd's offset: back to 0 for this one's line */
	CHECK(!ftruncate(log_fd, 0) && !lseek(log_fd, 0, SEEK_SET), "truncate the log");
	dup2(log_fd, 2);
	cio_hints_default(&sink.h);
	ret = cio_json_hints(json, "/d/f", sink_set, &sink);
	dup2(saved, 2);
	close(saved);
	n = pread(log_fd, msg, sizeof(msg) - 1, 0);
	msg[n > 0 ? n : 0] = 0;
	CHECK(ret == -EINVAL && !sink.sets, "'%.40s': returned %d after %d hints", text, ret,
	      sink.sets);
	CHECK(!strncmp(msg, "collio: ", 8) && strstr(msg, why) &&
	      strchr(msg, '\n') == msg + strlen(msg) - 1,
	      "'%.40s': '%s' is not one line with '%s'", text, msg, why);
}

#define BAD(text, why)	{ text, sizeof(text) - 1, why }
#define ENTRY(hints)	"{\"File\": [{\"Path\": \"/d/f\", \"Hints\": " hints "}]}"

static void test_json(void)
{
	static const struct {
		const char *text;
		size_t len;
		const char *why;
	} bad[] = {
		BAD("", "'[' or '{' expected near end of file"),
		BAD(" \n", "'[' or '{' expected"),
		/* truncated */
		BAD("{", "string or '}' expected"),
		BAD("{\"File\": [", "near end of file"),
		BAD("{\"File\": [{\"Path\": \"/d/f\", \"Hints\": {\"cb_nodes\": 2}",
		    "near end of file"),
		BAD("{\"File\": [{\"Path\": \"/d/", "premature end of input"),
		BAD("{\"File\": []} x", "end of file expected near 'x'"),
		/* the wrong types */
		BAD("[]", "at byte 0: not an object"),
		BAD("42", "'[' or '{' expected"),
		BAD("{\"File\": {}}", "\"File\" must be an array of {Path, Hints}"),
		BAD("{\"Directory\": \"/d\"}", "\"Directory\" must be an array"),
		BAD("{\"File\": [1]}", "File entry 0 needs a string Path and an object Hints"),
		BAD("{\"File\": [{\"Path\": 1, \"Hints\": {}}]}", "File entry 0 needs"),
		BAD("{\"File\": [{\"Path\": \"/d/f\", \"Hints\": []}]}", "File entry 0 needs"),
		BAD(ENTRY("{\"cb_nodes\": true}"), "hint cb_nodes must be a string or a number"),
		BAD(ENTRY("{\"cb_nodes\": null}"), "hint cb_nodes must be a string or a number"),
		BAD(ENTRY("{\"cb_nodes\": {\"n\": 2}}"), "hint cb_nodes must be"),
		BAD(ENTRY("{\"cb_nodes\": 2.5}"), "hint cb_nodes=2.5: expected an integer"),
		/* huge numbers */
		BAD(ENTRY("{\"cb_nodes\": 99999999999999999999999}"), "too big integer"),
		BAD(ENTRY("{\"cb_nodes\": 1e999}"), "real number overflow"),
		BAD(ENTRY("{\"cb_nodes\": 9223372036854775807}"),
		    "hint cb_nodes=9223372036854775807: expected an integer"),
		BAD(ENTRY("{\"cb_buffer_size\": 1e300}"), "hint cb_buffer_size=1"),
		/* NUL bytes, raw or escaped */
		BAD("{\"File\": []}\0", "end of file expected"),
		BAD("{\"File\": [{\"Path\": \"/d/\0f\", \"Hints\": {}}]}",
		    "control character 0x0"),
		BAD(ENTRY("{\"e10_cache\": \"enable\\u0000\"}"), "is not allowed"),
		/* not UTF-8 */
		BAD(ENTRY("{\"e10_cache\": \"\xff\"}"), "unable to decode byte 0xff"),
		BAD(ENTRY("{\"\xc0\xaf\": 1}"), "unable to decode byte 0xc0"),
		BAD(ENTRY("{\"e10_cache\": \"\\udc00\"}"), "invalid Unicode"),
		/* duplicate keys */
		BAD("{\"File\": [], \"File\": []}", "duplicate object key"),
		BAD(ENTRY("{\"cb_nodes\": 2, \"cb_nodes\": 3}"), "duplicate object key"),
	};
	static char deep[100000];
	char dir[] = "/tmp/collio-json-XXXXXX", json[64], log[64];
	int fd;

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(json, sizeof(json), "%s/hints.json", dir);
	snprintf(log, sizeof(log), "%s/stderr", dir);
	fd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0600);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_error(json, bad[i].text, bad[i].len, bad[i].why, fd);
	/* deep nesting, as arrays and as objects */
	memset(deep, '[', sizeof(deep));
	expect_error(json, deep, sizeof(deep), "maximum parsing depth reached", fd);
	for (size_t k = 0; k + 5 <= sizeof(deep); k += 5)
		memcpy(deep + k, "{\"a\":", 5);
	expect_error(json, deep, sizeof(deep), "maximum parsing depth reached", fd);
	close(fd);
	unlink(log);
	unlink(json);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	if (argc == 2 && !strcmp(argv[1], "flat")) {
		test_flat();
		test_view_access();
	} else if (argc == 2 && !strcmp(argv[1], "domains")) {
		test_domains();
	} else if (argc == 2 && !strcmp(argv[1], "hints")) {
		test_hints();
	} else if (argc == 2 && !strcmp(argv[1], "json")) {
		test_json();
	} else {
		fprintf(stderr, "usage: collio_unit flat|domains|hints|json\n");
		failures = 1;
	}
	MPI_Finalize();
	if (!failures)
		printf("ok\n");
	return failures ? 1 : 0;
}
