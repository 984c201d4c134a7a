/*
 * instance.cpp: MPI bootstrap of a KVS instance (instance.hpp).
 */
#include "instance.hpp"

#include <cerrno>
#include <cstring>

#include "error.hpp"

namespace kvs {

namespace {
/* Room for any provider's endpoint name (tcp: a sockaddr, shm: a path). */
constexpr int kAddrMax = 255;
}

Instance::Instance(MPI_Comm comm, const Config &cfg) : comm_(comm)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	broker_ = std::make_unique<Broker>(cfg, rank, size);

	std::string mine = broker_->address();
	if (mine.size() > kAddrMax)
		throw Error(EINVAL, "endpoint address of " + std::to_string(mine.size()) +
					    " bytes exceeds " + std::to_string(kAddrMax));
	std::vector<char> out(kAddrMax + 1, 0), all((kAddrMax + 1) * size_t(size));
	out[0] = static_cast<char>(mine.size());
	std::memcpy(out.data() + 1, mine.data(), mine.size());
	MPI_Allgather(out.data(), kAddrMax + 1, MPI_CHAR, all.data(), kAddrMax + 1, MPI_CHAR,
		      comm);
	std::vector<std::string> addrs(size);
	for (int i = 0; i < size; i++) {
		const char *p = all.data() + size_t(i) * (kAddrMax + 1);
		addrs[i].assign(p + 1, static_cast<unsigned char>(p[0]));
	}
	broker_->start(addrs);
	broker_->connect();
	MPI_Barrier(comm);
}

void Instance::close()
{
	if (!broker_)
		return;
	MPI_Barrier(comm_);
	broker_->stop();
	MPI_Barrier(comm_);
	broker_.reset();
}

Instance::~Instance()
{
	/* Not collective: a rank leaving on an error stops only its broker. */
	if (broker_)
		broker_->stop();
}

} // namespace kvs
