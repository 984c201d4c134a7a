/*
 * client.cpp: the client API of client.hpp.
 */
#include "client.hpp"

#include <atomic>

namespace kvs {

namespace {
std::atomic<uint64_t> next_client_id{0};
}

Client::Client(Broker &broker)
    : broker_(broker), txn_(broker.config().limits.max_value), id_(next_client_id++)
{
}

void Client::put(std::string_view key, std::string value)
{
	txn_.put(key, std::move(value));
}

void Client::unlink(std::string_view key)
{
	txn_.unlink(key);
}

uint64_t Client::commit()
{
	/* A commit is a fence of one, named uniquely for this client. */
	std::string name = "commit." + std::to_string(broker_.rank()) + "." +
			   std::to_string(id_) + "." + std::to_string(commits_++);
	return fence(name, 1);
}

uint64_t Client::fence(const std::string &name, uint32_t nprocs)
{
	std::vector<Op> ops = txn_.ops();
	uint64_t v = broker_.fence(name, nprocs, std::move(ops));
	txn_.clear();
	return v;
}

std::string Client::get(const std::string &key, uint64_t min_version)
{
	return broker_.get(key, min_version);
}

Directory Client::ls(const std::string &dir, uint64_t min_version)
{
	return broker_.ls(dir, min_version);
}

uint64_t Client::wait_version(uint64_t v)
{
	return broker_.wait_version(v);
}

} // namespace kvs
