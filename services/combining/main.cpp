/*
 * main.cpp: loggp-combining, the global structures' throughput workloads and
 * the graph kernels (README.md, "The program").
 */
#include <cstdio>
#include <exception>

#include <mpi.h>

#include "workloads.hpp"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	wl_prog p{};
	p.name = "loggp-combining";
	p.options = "-s -m -n -w -p -b -k -c -A -H -S -R -G -e -r -f -o -a -B";
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	comb::Options o;
	int ret = comb::parse_options(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	int status = 0;
	try {
		switch (o.structure) {
		case comb::Structure::STACK:
		case comb::Structure::QUEUE: status = comb::run_vector(p, o); break;
		case comb::Structure::SET:
		case comb::Structure::MAP: status = comb::run_hash(p, o); break;
		case comb::Structure::BFS: status = comb::run_bfs(p, o); break;
		case comb::Structure::CC: status = comb::run_cc(p, o); break;
		}
	} catch (const std::exception &e) {
		/* Peers may wait for this process's replies: end the job. */
		std::fprintf(stderr, "loggp-combining: rank %d: %s\n", p.rank, e.what());
		MPI_Abort(MPI_COMM_WORLD, 1);
		return 1;
	}
	MPI_Finalize();
	return status;
}
