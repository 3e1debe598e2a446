/* The layout mcoll must report for a communicator, from a node key per rank that the test
 * computed on its own (ranks with equal keys share a node). */
#ifndef MC_TEST_LAYOUT_CHECK_H
#define MC_TEST_LAYOUT_CHECK_H
#include <mpi.h>

typedef void (*expect_fn)(const char *what, long got, long want);

/* For a communicator mcoll has no context for yet (keys computed without mcoll's
 * collectives): mcoll_comm_info makes it, which must count one context, made from the world's
 * node table exactly when by_table. keys: width ints per rank of comm, in rank order. Nodes
 * are numbered by their lowest rank, local ranks follow rank order, the leader is the node's
 * lowest rank; compared field by field with mcoll_comm_info through expect (what = "<name>:
 * <field>"). */
void check_new_context(MPI_Comm comm, const char *name, const int *keys, int width, int by_table,
                       expect_fn expect);

#endif
