/* `clgrad train --mpi`: the trainer's comm (clgrad_train.h) over Open MPI, one device per rank.
 * Built when CMake finds MPI (CLGRAD_HAVE_MPI); otherwise clg_mpi_start says how to get it. */
#ifndef CLGRAD_TRAIN_MPI_H
#define CLGRAD_TRAIN_MPI_H

#include <clgrad_train.h>

/* MPI_Init, and comm filled for MPI_COMM_WORLD: collectives are non-blocking and give up with a
 * clear error after timeout_s seconds without an answer (a rank that died). *local_rank is this
 * rank's place among the ranks on its machine, for the choice of device. */
clg_status clg_mpi_start(int *argc, char ***argv, double timeout_s, clg_train_comm *comm, int *local_rank);
/* MPI_Finalize, or MPI_Abort when failed (so that the other ranks end too, not hang). */
void clg_mpi_stop(clg_train_comm *comm, int failed);

#endif
