/*
 * mpi_peers.hpp: every rank's endpoint address, exchanged with MPI.
 *
 * Services launched by mpirun learn their peers' libfabric addresses this way
 * (the KVS brokers, the combining runtime) and use MPI for nothing else on
 * their data path.  Collective over comm; throws svc::Error(EINVAL) when this
 * rank's address does not fit the exchange.
 */
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <mpi.h>

#include "error.hpp"

namespace svc {

/* Room for any provider's endpoint name (tcp: a sockaddr, shm: a path). */
constexpr int kMpiAddrMax = 255;

/* Every rank's address in rank order, given this rank's. */
inline std::vector<std::string> mpi_exchange_addresses(MPI_Comm comm, const std::string &mine)
{
	int size;
	MPI_Comm_size(comm, &size);
	if (mine.size() > kMpiAddrMax)
		throw Error(EINVAL, "endpoint address of " + std::to_string(mine.size()) +
					    " bytes exceeds " + std::to_string(kMpiAddrMax));
	std::vector<char> out(kMpiAddrMax + 1, 0), all((kMpiAddrMax + 1) * size_t(size));
	out[0] = static_cast<char>(mine.size());
	std::memcpy(out.data() + 1, mine.data(), mine.size());
	MPI_Allgather(out.data(), kMpiAddrMax + 1, MPI_CHAR, all.data(), kMpiAddrMax + 1,
		      MPI_CHAR, comm);
	std::vector<std::string> addrs(size);
	for (int i = 0; i < size; i++) {
		const char *p = all.data() + size_t(i) * (kMpiAddrMax + 1);
		addrs[i].assign(p + 1, static_cast<unsigned char>(p[0]));
	}
	return addrs;
}

} // namespace svc
