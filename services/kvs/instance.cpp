/*
 * instance.cpp: MPI bootstrap of a KVS instance (instance.hpp).
 */
#include "instance.hpp"

#include "common/mpi_peers.hpp"

namespace kvs {

Instance::Instance(MPI_Comm comm, const Config &cfg) : comm_(comm)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	broker_ = std::make_unique<Broker>(cfg, rank, size);

	broker_->start(svc::mpi_exchange_addresses(comm, broker_->address()));
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
