/*
 * client.hpp: the KVS client API that workloads link.
 *
 * A Client belongs to one thread and talks to the broker of its process.
 * put() and unlink() are buffered in the client's transaction (write-back,
 * nothing travels); commit() and fence() send the transaction and return
 * once the new root is visible at this broker; get() reads through the
 * broker's cache.  Every call throws kvs::Error (error.hpp) with errno-style
 * codes: ENOENT missing key, EINVAL bad key, EFBIG value over the limit,
 * ETIMEDOUT a broker that did not answer (for commit() and fence(): the
 * operations may still be applied at the root; the outcome is unknown).
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "broker.hpp"
#include "txn.hpp"

namespace kvs {

class Client {
public:
	explicit Client(Broker &broker);

	void put(std::string_view key, std::string value);
	void unlink(std::string_view key);
	/* Operations buffered since the last commit or fence. */
	size_t pending() const { return txn_.ops().size(); }

	/* Commits this client's transaction alone; returns the new version. */
	uint64_t commit();
	/*
	 * Collective commit: returns when nprocs participants have called
	 * fence(name) and the root holding all their operations is visible
	 * here.  Names must be unique per fence among concurrent fences.
	 */
	uint64_t fence(const std::string &name, uint32_t nprocs);

	/* The value of key; with min_version, waits for that root first. */
	std::string get(const std::string &key, uint64_t min_version = 0);
	Directory ls(const std::string &dir, uint64_t min_version = 0);
	/* Blocks until the root version is at least v; returns the version. */
	uint64_t wait_version(uint64_t v);
	uint64_t version() { return wait_version(0); }

private:
	Broker &broker_;
	Txn txn_;
	uint64_t commits_ = 0;
	uint64_t id_;
};

} // namespace kvs
