/*
 * loggp-collio-run: runs a program with the collio library preloaded, for
 * launchers that cannot set a rank's environment (the experiment runner's
 * workloads: workloads/suites/collio.yaml).
 *
 *   loggp-collio-run [--io COMPONENT] [--no-collio] PROGRAM [ARGS...]
 *
 * LD_PRELOAD gets libloggp-collio.so from this program's own directory
 * (unless --no-collio); --io sets OMPI_MCA_io (romio321 or ompio: Open
 * MPI's own MPI-IO, for comparisons).  A relative PROGRAM that exists below
 * the build directory (two levels up from here) is run from there, so
 * suites can name workloads/NAME/NAME.  Exits 2 with one line on bad usage,
 * 127 when PROGRAM cannot be run.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: loggp-collio-run [--io romio321|ompio] [--no-collio] PROGRAM [ARGS...]\n";

int main(int argc, char **argv)
{
	char self[PATH_MAX], dir[PATH_MAX], lib[PATH_MAX + 32], prog[PATH_MAX * 2];
	int i = 1, preload = 1;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		fprintf(stderr, "loggp-collio-run: /proc/self/exe: %s\n", strerror(errno));
		return 127;
	}
	self[n] = 0;
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--no-collio")) {
			preload = 0;
		} else if (!strcmp(argv[i], "--io") && i + 1 < argc &&
			   (!strcmp(argv[i + 1], "romio321") || !strcmp(argv[i + 1], "ompio"))) {
			setenv("OMPI_MCA_io", argv[++i], 1);
		} else {
			fprintf(stderr, "loggp-collio-run: bad option '%s' (expected --io romio321, "
					"--io ompio or --no-collio)\n%s", argv[i], usage);
			return 2;
		}
	}
	if (i == argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (preload) {
		snprintf(lib, sizeof(lib), "%s/libloggp-collio.so", dir);
		setenv("LD_PRELOAD", lib, 1);
	}
	snprintf(prog, sizeof(prog), "%s/../../%s", dir, argv[i]);
	if (argv[i][0] != '/' && access(prog, X_OK) == 0)
		argv[i] = prog;
	execvp(argv[i], &argv[i]);
	fprintf(stderr, "loggp-collio-run: cannot run %s: %s\n", argv[i], strerror(errno));
	return 127;
}
