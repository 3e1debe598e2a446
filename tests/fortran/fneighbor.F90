! A Fortran program with persistent neighbor alltoallv requests (MPI 4: MPICH), built without
! mcoll (use mpi, or use mpi_f08 when F08 is defined) and run with libmcoll.so preloaded. The
! requests are mcoll's (MPI_Neighbor_alltoallv_init is interposed); every request call of
! Fortran must reach mcoll: MPI_Start/Wait, Start/Test, Request_get_status, Startall/Waitall
! with a native persistent request mixed in, Waitany, Waitsome, Testsome, Testany, Testall,
! Request_free.
! Each iteration sends new data; the received blocks are checked against the senders' values.
#ifdef F08
#define HANDLE(kind) type(kind)
#define STATUS_T type(MPI_Status)
#else
#define HANDLE(kind) integer
#define STATUS_T integer, dimension(MPI_STATUS_SIZE)
#endif

program fneighbor
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  use fcheck
  implicit none
  integer, parameter :: K = 4, ITERS = 9
  HANDLE(MPI_Comm) :: g
  HANDLE(MPI_Request) :: reqs(3)
  STATUS_T :: st
  integer :: rank, p, ierr, it, i, j, srcs(2), dsts(2), scnt(2), sdsp(2), rcnt(2), rdsp(2)
  ! volatile: MPI reads and writes these between the calls that name them
  integer, volatile :: sb(2 * K), rb(2 * K), sb2(2 * K), rb2(2 * K), selfs, selfr
  integer :: idx(3), nout, done
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  wrank = rank
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  ! a ring: from the left and the right neighbour, to them (p = 1: itself twice)
  srcs = [mod(rank - 1 + p, p), mod(rank + 1, p)]
  dsts = [mod(rank + 1, p), mod(rank - 1 + p, p)]
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, &
       MPI_UNWEIGHTED, MPI_INFO_NULL, .false., g, ierr)
  scnt = K
  sdsp = [0, K]
  rcnt = K
  rdsp = [0, K]
  call MPI_Neighbor_alltoallv_init(sb, scnt, sdsp, MPI_INTEGER, rb, rcnt, rdsp, MPI_INTEGER, g, &
       MPI_INFO_NULL, reqs(1), ierr)
  call MPI_Neighbor_alltoallv_init(sb2, scnt, sdsp, MPI_INTEGER, rb2, rcnt, rdsp, MPI_INTEGER, g, &
       MPI_INFO_NULL, reqs(2), ierr)
  ! a native persistent request pair to itself, mixed into the arrays
  call MPI_Recv_init(selfr, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, reqs(3), ierr)
  do it = 1, ITERS
    ! block j of rank r: to dsts(j), values r*1000 + it*10 + j*100 + i
    do j = 1, 2
      sb((j - 1) * K + 1:j * K) = [(rank * 1000 + it * 10 + j * 100 + i, i = 1, K)]
      sb2((j - 1) * K + 1:j * K) = -sb((j - 1) * K + 1:j * K)
    end do
    rb = -1
    rb2 = -1
    selfs = it
    select case (mod(it, 9))
    case (1)
      call MPI_Start(reqs(1), ierr)
      call MPI_Wait(reqs(1), st, ierr)
      call MPI_Start(reqs(2), ierr)
      call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)
    case (2)
      call MPI_Startall(2, reqs, ierr)
      flag = .false.
      do while (.not. flag)
        call MPI_Test(reqs(1), flag, MPI_STATUS_IGNORE, ierr)
      end do
      flag = .false.
      do while (.not. flag)
        call MPI_Request_get_status(reqs(2), flag, MPI_STATUS_IGNORE, ierr)
      end do
      do j = 1, 2
        do i = 1, K
          call expect(rb2((j - 1) * K + i) == -(srcs(j) * 1000 + it * 10 + j * 100 + i), &
                      'request_get_status said complete before the data', it)
        end do
      end do
      call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)
    case (3)
      call MPI_Startall(3, reqs, ierr)
      call MPI_Send(selfs, 1, MPI_INTEGER, 0, 7, MPI_COMM_SELF, ierr)
      call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE, ierr)
      call expect(selfr == it, 'native request in Waitall', it)
    case (4)
      call MPI_Startall(2, reqs, ierr)
      call MPI_Waitany(2, reqs, idx(1), MPI_STATUS_IGNORE, ierr)
      call MPI_Waitany(2, reqs, idx(2), MPI_STATUS_IGNORE, ierr)
      call expect(idx(1) + idx(2) == 3 .and. idx(1) * idx(2) == 2, 'waitany indices (1-based, each once)', &
                  idx(1) * 10 + idx(2))
    case (5)
      call MPI_Startall(2, reqs, ierr)
      done = 0
      do while (done < 2)
        call MPI_Waitsome(2, reqs, nout, idx, MPI_STATUSES_IGNORE, ierr)
        call expect(nout >= 1 .and. nout <= 2, 'waitsome outcount', nout)
        if (nout < 1 .or. nout > 2) exit
        do j = 1, nout
          call expect(idx(j) == 1 .or. idx(j) == 2, 'waitsome index (1-based)', idx(j))
        end do
        done = done + nout
      end do
    case (6)
      call MPI_Startall(2, reqs, ierr)
      done = 0
      do while (done < 2)
        call MPI_Testsome(2, reqs, nout, idx, MPI_STATUSES_IGNORE, ierr)
        call expect(nout /= MPI_UNDEFINED, 'testsome: MPI_UNDEFINED while active', done)
        if (nout == MPI_UNDEFINED) exit
        done = done + nout
      end do
    case (7)
      call MPI_Startall(2, reqs, ierr)
      done = 0
      idx = 0
      do while (done < 2)
        call MPI_Testany(2, reqs, idx(done + 1), flag, MPI_STATUS_IGNORE, ierr)
        if (flag) done = done + 1
      end do
      call expect(idx(1) + idx(2) == 3 .and. idx(1) * idx(2) == 2, 'testany indices (1-based, each once)', &
                  idx(1) * 10 + idx(2))
    case default
      call MPI_Startall(2, reqs, ierr)
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
      end do
    end select
    ! slot j came from srcs(j), which sent it as its block j (its dsts(j) is this rank; with
    ! p <= 2 both go to the same rank, matched in order)
    do j = 1, 2
      do i = 1, K
        call expect(rb((j - 1) * K + i) == srcs(j) * 1000 + it * 10 + j * 100 + i, 'received block', it)
        call expect(rb2((j - 1) * K + i) == -(srcs(j) * 1000 + it * 10 + j * 100 + i), 'second request', it)
      end do
    end do
  end do
  ! both are mcoll's requests, and every start reached mcoll
#ifdef F08
  call expect(fnb_starts(reqs(1)%MPI_VAL) == ITERS, 'starts counted by mcoll, request 1', int(fnb_starts(reqs(1)%MPI_VAL)))
  call expect(fnb_starts(reqs(2)%MPI_VAL) == ITERS, 'starts counted by mcoll, request 2', int(fnb_starts(reqs(2)%MPI_VAL)))
#else
  call expect(fnb_starts(reqs(1)) == ITERS, 'starts counted by mcoll, request 1', int(fnb_starts(reqs(1))))
  call expect(fnb_starts(reqs(2)) == ITERS, 'starts counted by mcoll, request 2', int(fnb_starts(reqs(2))))
#endif
  call MPI_Request_free(reqs(1), ierr)
  call MPI_Request_free(reqs(2), ierr)
  call MPI_Request_free(reqs(3), ierr)
  call MPI_Comm_free(g, ierr)
  call report('mcoll-fneighbor', 'ALL PASSED')
  call MPI_Finalize(ierr)
end program
