/*
 * kvs_mpi_check: multi-process checks of the KVS protocol, run by
 * tests/test_kvs.py at 2-4 ranks: concurrent fences of different names,
 * read-your-writes after commit and fence, causal gets that wait for a
 * version, unlink, and errors (missing key, bad key, value over the limit)
 * that come back at once instead of hanging.
 *
 * Prints "kvs_mpi_check: rank R: <check>: FAILED <why>" per failure and
 * exits 1 if any rank failed, 0 otherwise.
 */
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <mpi.h>

#include "client.hpp"
#include "error.hpp"
#include "instance.hpp"

namespace {

int rank, nranks, failures;

void fail(const char *check, const std::string &why)
{
	std::fprintf(stderr, "kvs_mpi_check: rank %d: %s: FAILED %s\n", rank, check, why.c_str());
	failures++;
}

void expect_value(kvs::Client &c, const char *check, const std::string &key,
		  const std::string &want, uint64_t min_version = 0)
{
	try {
		std::string got = c.get(key, min_version);
		if (got != want)
			fail(check, key + " = '" + got + "', expected '" + want + "'");
	} catch (const kvs::Error &e) {
		fail(check, key + ": " + e.what());
	}
}

/* The call must throw errnum, quickly (well before the KVS timeout). */
template <class F>
void expect_error(const char *check, int errnum, F &&f)
{
	auto t0 = std::chrono::steady_clock::now();
	try {
		f();
		fail(check, "no error, expected errno " + std::to_string(errnum));
		return;
	} catch (const kvs::Error &e) {
		if (e.errnum() != errnum)
			fail(check, std::string("errno ") + std::to_string(e.errnum()) + " (" +
					    e.what() + "), expected " + std::to_string(errnum));
	}
	if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(5))
		fail(check, "the error took more than 5 s");
}

void concurrent_fences(kvs::Client &c)
{
	/* Even and odd ranks fence under different names at the same time. */
	bool even = rank % 2 == 0;
	uint32_t group = static_cast<uint32_t>(even ? (nranks + 1) / 2 : nranks / 2);
	c.put(std::string(even ? "even." : "odd.") + "r" + std::to_string(rank),
	      "v" + std::to_string(rank));
	c.fence(even ? "check.even" : "check.odd", group);
	c.fence("check.both", static_cast<uint32_t>(nranks));
	for (int r = 0; r < nranks; r++)
		expect_value(c, "concurrent fences",
			     std::string(r % 2 ? "odd." : "even.") + "r" + std::to_string(r),
			     "v" + std::to_string(r));
}

void read_your_writes(kvs::Client &c)
{
	std::string key = "ryw.r" + std::to_string(rank);
	c.put(key, "first");
	c.commit();
	expect_value(c, "read-your-writes after commit", key, "first");
	c.put(key, "second");
	c.fence("check.ryw", static_cast<uint32_t>(nranks));
	expect_value(c, "read-your-writes after fence", key, "second");
	/* Large values are stored by reference and faulted in whole; one
	 * over 16 KiB also travels in pieces (fabric.hpp). */
	std::string big(100 * 1024, static_cast<char>('a' + rank % 26));
	c.put("big.r" + std::to_string(rank), big);
	c.fence("check.big", static_cast<uint32_t>(nranks));
	int peer = (rank + 1) % nranks;
	expect_value(c, "by-reference value", "big.r" + std::to_string(peer),
		     std::string(100 * 1024, static_cast<char>('a' + peer % 26)));
}

void causal(kvs::Broker &b, kvs::Client &c)
{
	c.fence("check.causal.start", static_cast<uint32_t>(nranks));
	uint64_t v0 = c.version();
	if (nranks == 1)
		return;
	/* Every other rank asks for the key at v0 + 1 before rank 0 writes
	 * it, from a thread, and rank 0 writes only once those gets wait at
	 * their brokers: a get that did not wait would fail with ENOENT. */
	std::thread reader;
	if (rank != 0) {
		reader = std::thread([&] {
			kvs::Client rc(b);
			expect_value(rc, "causal get waits for its version", "causal.x", "later",
				     v0 + 1);
		});
		auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
		while (b.stats().version_waiters == 0 && std::chrono::steady_clock::now() < until)
			std::this_thread::yield();
		if (b.stats().version_waiters == 0)
			fail("causal", "the get never waited at the broker");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		c.put("causal.x", "later");
		uint64_t v = c.commit();
		if (v != v0 + 1)
			fail("causal", "commit made version " + std::to_string(v) + ", expected " +
					       std::to_string(v0 + 1));
	} else {
		reader.join();
	}
}

void unlink_and_errors(kvs::Client &c)
{
	if (rank == 0) {
		c.put("gone.k", "x");
		c.commit();
		c.unlink("gone.k");
		c.commit();
	}
	c.fence("check.unlink", static_cast<uint32_t>(nranks));
	expect_error("unlinked key", ENOENT, [&] { c.get("gone.k"); });
	expect_error("missing key", ENOENT, [&] { c.get("no.such.key"); });
	expect_error("missing directory", ENOENT, [&] { c.ls("no.such.dir"); });
	expect_error("bad key", EINVAL, [&] { c.get("a..b"); });
	expect_error("bad key in put", EINVAL, [&] { c.put("bad key", "v"); });
	expect_error("value over the limit", EFBIG,
		     [&] { c.put("huge", std::string(256 * 1024 + 1, 'x')); });
	expect_error("key names a directory", EISDIR, [&] { c.get("even"); });
	expect_error("value used as a directory", ENOTDIR, [&] { c.get("even.r0.sub"); });
}

} // namespace

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	kvs::Config cfg;
	if (const char *p = std::getenv("LOGGP_PROVIDER"); p && *p)
		cfg.provider = p;
	cfg.limits.max_value = 256 * 1024;
	cfg.timeout = std::chrono::seconds(20);
	try {
		kvs::Instance inst(MPI_COMM_WORLD, cfg);
		kvs::Client c(inst.broker());
		concurrent_fences(c);
		read_your_writes(c);
		causal(inst.broker(), c);
		unlink_and_errors(c);
		inst.close();
	} catch (const std::exception &e) {
		fail("run", e.what());
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int all = 0;
	MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		std::printf("kvs_mpi_check: %d ranks, %d failures\n", nranks, all);
	MPI_Finalize();
	return all ? 1 : 0;
}
