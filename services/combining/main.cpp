/*
 * main.cpp: loggp-combining, the global structures' throughput workloads
 * (README.md, "The program").
 */
#include <cstdio>
#include <exception>

#include <mpi.h>

#include "throughput.hpp"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	wl_prog p{};
	p.name = "loggp-combining";
	p.options = "-s -m -n -w -p -b -k -c -A -H -S -R";
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	comb::Options o;
	int ret = comb::parse_options(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	int status;
	try {
		bool hash = o.structure == comb::Structure::SET ||
			    o.structure == comb::Structure::MAP;
		status = hash ? comb::run_hash(p, o) : comb::run_vector(p, o);
	} catch (const std::exception &e) {
		/* Peers may wait for this process's replies: end the job. */
		std::fprintf(stderr, "loggp-combining: rank %d: %s\n", p.rank, e.what());
		MPI_Abort(MPI_COMM_WORLD, 1);
		return 1;
	}
	MPI_Finalize();
	return status;
}
