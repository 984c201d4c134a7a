/*
 * options.hpp: loggp-combining's command line (README.md, "The program").
 */
#pragma once

#include <cstdint>
#include <string>

extern "C" {
#include "wl.h"
}

#include "mode.hpp"

namespace comb {

enum class Structure { STACK, QUEUE, SET, MAP, BFS, CC };

struct Options {
	Structure structure = Structure::STACK;
	Mode mode = Mode::FULL;
	int64_t ops = 100000;		/* per process */
	int64_t workers = 2048;		/* per process */
	int64_t push_pct = 100;		/* pushes or inserts */
	int64_t buffer = 1024;
	int64_t keys = 1024;
	int64_t capacity = 0;		/* 0: every push fits */
	bool aggregate = true;
	bool history = false;
	int64_t seed = 1;
	std::string provider;
	/* graph kernels */
	bool tuned = false;		/* -m tuned */
	int64_t scale = 10;
	bool scale_given = false;	/* -G on the command line */
	int64_t edgefactor = 16;
	int64_t roots = 64;
	std::string edge_file;		/* read the graph from it */
	std::string write_file;		/* write the generated graph to it */
	double alpha = 14, beta = 24;
};

/* 0: run; 1: -h was printed; -EINVAL: one line was printed by rank 0. */
int parse_options(const wl_prog *p, int argc, char **argv, Options *o);

} // namespace comb
