/*
 * instance.hpp: a KVS instance over an MPI communicator, one broker per
 * rank, bootstrapped by exchanging endpoint addresses with MPI.
 *
 * The constructor and close() are collective over the communicator.  The
 * constructor returns when every broker runs, has seen the root's first
 * root reference (so gets never race the start-up) and is connected to its
 * parent (so the first fence pays no connection set-up); close() waits until
 * every rank is done with the KVS before any broker stops, so no broker
 * leaves while a peer may still ask it for objects.  MPI is used for nothing
 * else: broker traffic is libfabric's.
 */
#pragma once

#include <memory>

#include <mpi.h>

#include "broker.hpp"

namespace kvs {

class Instance {
public:
	Instance(MPI_Comm comm, const Config &cfg);
	~Instance();
	Instance(const Instance &) = delete;
	Instance &operator=(const Instance &) = delete;

	Broker &broker() { return *broker_; }
	/* Collective: stops this rank's broker once every rank got here. */
	void close();

private:
	MPI_Comm comm_;
	std::unique_ptr<Broker> broker_;
};

} // namespace kvs
