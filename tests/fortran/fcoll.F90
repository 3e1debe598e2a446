! A Fortran MPI program, built without mcoll (use mpi, or use mpi_f08 when F08 is defined) and
! run with libmcoll.so preloaded: every interposed collective, in its Fortran forms
! (MPI_IN_PLACE, MPI_BOTTOM, Fortran datatypes, a user-defined non-commutative op, v-counts),
! on MPI_COMM_WORLD and a reordered split, checked against values computed here; errors
! through ierror; MPI_Alloc_mem from the node-shared heap. Then mcoll's counters (fstats.c)
! must show every collective handled by mcoll, and MPI_Finalize prints the MCOLL_STATS table.
#ifdef F08
#define HANDLE(kind) type(kind)
#else
#define HANDLE(kind) integer
#endif

! the test op: affine maps x -> a*x + b mod AMOD, composed in rank order
module faffine
  implicit none
  integer, parameter :: AMOD = 1009
contains
  ! (a,b) then (c,d): x -> c*(a*x+b)+d
  subroutine compose(l, r)
    integer, intent(in) :: l(2)
    integer, intent(inout) :: r(2)
    r = [mod(l(1) * r(1), AMOD), mod(l(2) * r(1) + r(2), AMOD)]
  end subroutine

  subroutine affine_of(rank, i, m)
    integer, intent(in) :: rank, i
    integer, intent(out) :: m(2)
    m = [mod(rank * 3 + i, AMOD - 1) + 1, mod(rank * 5 + 2 * i, AMOD)]
  end subroutine
end module

#ifdef F08
subroutine affine_fn(invec, inoutvec, len, datatype)
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use faffine
  implicit none
  type(c_ptr), value :: invec, inoutvec
  integer :: len
  type(MPI_Datatype) :: datatype
  integer, pointer :: a(:, :), b(:, :)
  integer :: k
  call c_f_pointer(invec, a, [2, len])
  call c_f_pointer(inoutvec, b, [2, len])
  do k = 1, len
    call compose(a(:, k), b(:, k))
  end do
end subroutine
#else
subroutine affine_fn(a, b, len, datatype)
  use faffine
  implicit none
  integer :: len, datatype
  integer :: a(2, len), b(2, len)
  integer :: k
  do k = 1, len
    call compose(a(:, k), b(:, k))
  end do
end subroutine
#endif

module fcases
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  use fcheck
  use faffine
  implicit none
  integer, parameter :: N = 13
  HANDLE(MPI_Datatype) :: pair_t
  HANDLE(MPI_Op) :: affine_op
contains
  subroutine reductions(comm, me, p)
    HANDLE(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: me, p
    integer :: a(N), b(N), pa(2, N), pb(2, N), want(2), i, r, ierr
    double precision :: d(N)
    logical :: la(N), lb(N), lw
    a = [(me + i, i = 1, N)]
    call MPI_Allreduce(a, b, N, MPI_INTEGER, MPI_SUM, comm, ierr)
    do i = 1, N
      call expect(b(i) == p * i + p * (p - 1) / 2, 'allreduce INTEGER SUM', i)
    end do
    d = [(me * 1.5d0 + i, i = 1, N)]
    call MPI_Allreduce(MPI_IN_PLACE, d, N, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
    do i = 1, N
      call expect(abs(d(i) - ((p - 1) * 1.5d0 + i)) < 1d-12, 'allreduce in place DOUBLE PRECISION MAX', i)
    end do
    pa(1, :) = [(mod(me * 7 + i, 5), i = 1, N)]
    pa(2, :) = me
    call MPI_Allreduce(pa, pb, N, MPI_2INTEGER, MPI_MAXLOC, comm, ierr)
    do i = 1, N
      want = [-1, -1]
      do r = 0, p - 1
        if (mod(r * 7 + i, 5) > want(1)) want = [mod(r * 7 + i, 5), r]
      end do
      call expect(all(pb(:, i) == want), 'allreduce 2INTEGER MAXLOC', i)
    end do
    la = [(mod(me + i, 3) /= 0, i = 1, N)]
    call MPI_Allreduce(la, lb, N, MPI_LOGICAL, MPI_LAND, comm, ierr)
    do i = 1, N
      lw = .true.
      do r = 0, p - 1
        lw = lw .and. mod(r + i, 3) /= 0
      end do
      call expect(lb(i) .eqv. lw, 'allreduce LOGICAL LAND', i)
    end do
    ! the user-defined op: rank order must hold (allreduce, reduce in place at the root, scan)
    do i = 1, N
      call affine_of(me, i, pa(:, i))
    end do
    call MPI_Allreduce(pa, pb, N, pair_t, affine_op, comm, ierr)
    call expect_fold(pb, 0, p - 1, 'allreduce user op')
    pb = pa
    if (me == p - 1) then
      call MPI_Reduce(MPI_IN_PLACE, pb, N, pair_t, affine_op, p - 1, comm, ierr)
      call expect_fold(pb, 0, p - 1, 'reduce in place user op')
    else
      call MPI_Reduce(pa, pb, N, pair_t, affine_op, p - 1, comm, ierr)
    end if
    call MPI_Scan(pa, pb, N, pair_t, affine_op, comm, ierr)
    call expect_fold(pb, 0, me, 'scan user op')
    b = -7
    call MPI_Reduce(a, b, N, MPI_INTEGER, MPI_SUM, 0, comm, ierr)
    do i = 1, N
      call expect(me /= 0 .or. b(i) == p * i + p * (p - 1) / 2, 'reduce INTEGER SUM', i)
    end do
    a = me + 1
    call MPI_Exscan(a, b, N, MPI_INTEGER, MPI_SUM, comm, ierr)
    do i = 1, N
      call expect(me == 0 .or. b(i) == me * (me + 1) / 2, 'exscan', i)
    end do
  contains
    subroutine expect_fold(got, lo, hi, what)
      integer, intent(in) :: got(2, N), lo, hi
      character(*), intent(in) :: what
      integer :: k, rr, acc(2), x(2)
      do k = 1, N
        call affine_of(lo, k, acc)
        do rr = lo + 1, hi
          call affine_of(rr, k, x)
          call compose(acc, x)
          acc = x
        end do
        call expect(all(got(:, k) == acc), what, k)
      end do
    end subroutine
  end subroutine

  subroutine scatters(comm, me, p)
    HANDLE(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: me, p
    integer :: s(N * p), r(N), cnt(p), dsp(p), i, j, off, ierr
    integer, allocatable :: sv(:), rv(:)
    s = [(me * 100 + i, i = 1, N * p)]
    call MPI_Reduce_scatter_block(s, r, N, MPI_INTEGER, MPI_SUM, comm, ierr)
    do i = 1, N
      call expect(r(i) == 100 * p * (p - 1) / 2 + p * (me * N + i), 'reduce_scatter_block', i)
    end do
    cnt = [(j, j = 1, p)]
    off = me * (me + 1) / 2
    allocate(sv(p * (p + 1) / 2), rv(me + 1))
    sv = [(me + i, i = 1, size(sv))]
    call MPI_Reduce_scatter(sv, rv, cnt, MPI_INTEGER, MPI_SUM, comm, ierr)
    do i = 1, me + 1
      call expect(rv(i) == p * (p - 1) / 2 + p * (off + i), 'reduce_scatter', i)
    end do
    ! scatter and scatterv from rank 1 mod p
    s = -1
    if (me == mod(1, p)) s = [(i * 3, i = 1, N * p)]
    call MPI_Scatter(s, N, MPI_INTEGER, r, N, MPI_INTEGER, mod(1, p), comm, ierr)
    do i = 1, N
      call expect(r(i) == (me * N + i) * 3, 'scatter', i)
    end do
    dsp = [(j * (j - 1) / 2, j = 1, p)]
    if (me == mod(1, p)) sv = [(i * 5, i = 1, size(sv))]
    rv = -1
    call MPI_Scatterv(sv, cnt, dsp, MPI_INTEGER, rv, me + 1, MPI_INTEGER, mod(1, p), comm, ierr)
    do i = 1, me + 1
      call expect(rv(i) == (off + i) * 5, 'scatterv', i)
    end do
  end subroutine

  subroutine gathers(comm, me, p)
    HANDLE(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: me, p
    integer :: s(N), r(N, p), cnt(p), dsp(p), i, j, root, ierr
    ! volatile: MPI writes rv through MPI_BOTTOM, which the compiler cannot see (MPICH 4.0's
    ! MPI_F_sync_reg crashes under `use mpi`)
    integer, allocatable, volatile :: rv(:)
    integer, allocatable :: sv(:)
    integer(MPI_ADDRESS_KIND) :: addr(1)
    HANDLE(MPI_Datatype) :: abs_t
    s = [(me * 1000 + i, i = 1, N)]
    call MPI_Allgather(s, N, MPI_INTEGER, r, N, MPI_INTEGER, comm, ierr)
    call expect_blocks(.true., 'allgather')
    r = -1
    r(:, me + 1) = s
    call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, N, MPI_INTEGER, comm, ierr)
    call expect_blocks(.true., 'allgather in place')
    root = p - 1
    r = -1
    if (me == root) then
      r(:, me + 1) = s
      call MPI_Gather(MPI_IN_PLACE, N, MPI_INTEGER, r, N, MPI_INTEGER, root, comm, ierr)
    else
      call MPI_Gather(s, N, MPI_INTEGER, r, N, MPI_INTEGER, root, comm, ierr)
    end if
    call expect_blocks(me == root, 'gather in place at the root')
    cnt = [(j, j = 1, p)]
    dsp = [(j * (j - 1) / 2, j = 1, p)]
    allocate(rv(p * (p + 1) / 2), sv(me + 1))
    sv = [(me * 1000 + i, i = 1, me + 1)]
    rv = -1
    call MPI_Allgatherv(sv, me + 1, MPI_INTEGER, rv, cnt, dsp, MPI_INTEGER, comm, ierr)
    call expect_v(.true., 'allgatherv')
    rv = -1
    call MPI_Gatherv(sv, me + 1, MPI_INTEGER, rv, cnt, dsp, MPI_INTEGER, 0, comm, ierr)
    call expect_v(me == 0, 'gatherv')
    ! blocks of an absolute-address INTEGER type at MPI_BOTTOM (displacements in its extent)
    rv = -1
    call MPI_Get_address(rv, addr(1), ierr)
    call MPI_Type_create_hindexed(1, [1], addr, MPI_INTEGER, abs_t, ierr)
    call MPI_Type_commit(abs_t, ierr)
    call MPI_Allgatherv(sv, me + 1, MPI_INTEGER, MPI_BOTTOM, cnt, dsp, abs_t, comm, ierr)
    call expect_v(.true., 'allgatherv into MPI_BOTTOM')
    sv = -1
    call MPI_Scatterv(MPI_BOTTOM, cnt, dsp, abs_t, sv, me + 1, MPI_INTEGER, 0, comm, ierr)
    do i = 1, me + 1
      call expect(sv(i) == me * 1000 + i, 'scatterv from MPI_BOTTOM', i)
    end do
    call MPI_Type_free(abs_t, ierr)
  contains
    subroutine expect_blocks(here, what)
      logical, intent(in) :: here
      character(*), intent(in) :: what
      integer :: k, q
      if (.not. here) return
      do q = 1, p
        do k = 1, N
          call expect(r(k, q) == (q - 1) * 1000 + k, what, k)
        end do
      end do
    end subroutine
    subroutine expect_v(here, what)
      logical, intent(in) :: here
      character(*), intent(in) :: what
      integer :: k, q
      if (.not. here) return
      do q = 1, p
        do k = 1, q
          call expect(rv(dsp(q) + k) == (q - 1) * 1000 + k, what, k)
        end do
      end do
    end subroutine
  end subroutine

  subroutine moves(comm, me, p)
    HANDLE(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: me, p
    integer :: s(N, p), r(N, p), scnt(p), sdsp(p), rcnt(p), rdsp(p), i, j, ierr
    integer(MPI_ADDRESS_KIND) :: addr(1)
    HANDLE(MPI_Datatype) :: abs_t
    double precision, volatile :: x(37)   ! written through MPI_BOTTOM, as rv in gathers
    ! bcast from the last rank, once into a buffer and once at MPI_BOTTOM through an
    ! absolute-address datatype
    x = -1
    if (me == p - 1) x = [(p * 1000 + i, i = 1, 37)]
    call MPI_Bcast(x, 37, MPI_DOUBLE_PRECISION, p - 1, comm, ierr)
    do i = 1, 37
      call expect(abs(x(i) - (p * 1000 + i)) < 0.5d0, 'bcast', i)
    end do
    if (me /= 0) x = -1
    if (me == 0) x = [(i * 2, i = 1, 37)]
    call MPI_Get_address(x, addr(1), ierr)
    call MPI_Type_create_hindexed(1, [37], addr, MPI_DOUBLE_PRECISION, abs_t, ierr)
    call MPI_Type_commit(abs_t, ierr)
    call MPI_Bcast(MPI_BOTTOM, 1, abs_t, 0, comm, ierr)
    call MPI_Type_free(abs_t, ierr)
    do i = 1, 37
      call expect(abs(x(i) - i * 2) < 0.5d0, 'bcast at MPI_BOTTOM', i)
    end do
    s = reshape([((me * 1000 + (j - 1) * 10 + i, i = 1, N), j = 1, p)], [N, p])
    call MPI_Alltoall(s, N, MPI_INTEGER, r, N, MPI_INTEGER, comm, ierr)
    do j = 1, p
      do i = 1, N
        call expect(r(i, j) == (j - 1) * 1000 + me * 10 + i, 'alltoall', i)
      end do
    end do
    ! rank me sends j elements to rank j - 1 and receives me + 1 from each
    scnt = [(j, j = 1, p)]
    sdsp = [((j - 1) * N, j = 1, p)]
    rcnt = me + 1
    rdsp = sdsp
    r = -1
    call MPI_Alltoallv(s, scnt, sdsp, MPI_INTEGER, r, rcnt, rdsp, MPI_INTEGER, comm, ierr)
    do j = 1, p
      do i = 1, me + 1
        call expect(r(i, j) == (j - 1) * 1000 + me * 10 + i, 'alltoallv', i)
      end do
    end do
    call MPI_Barrier(comm, ierr)
  end subroutine

  subroutine all_cases(comm)
    HANDLE(MPI_Comm), intent(in) :: comm
    integer :: me, p, ierr
    call MPI_Comm_rank(comm, me, ierr)
    call MPI_Comm_size(comm, p, ierr)
    call reductions(comm, me, p)
    call scatters(comm, me, p)
    call gathers(comm, me, p)
    call moves(comm, me, p)
  end subroutine

  ! Bad arguments come back in ierror with the native error class.
  subroutine errors()
    integer :: a(2), b(2), ierr, ierr2, cls, p
    call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    a = 1
    call MPI_Allreduce(a, b, -1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, cls, ierr2)
    call expect(cls == MPI_ERR_COUNT, 'negative count: ierror class', cls)
    call MPI_Bcast(a, 2, MPI_INTEGER, p, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, cls, ierr2)
    call expect(cls == MPI_ERR_ROOT, 'root out of range: ierror class', cls)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
#ifdef F08
    call MPI_Barrier(MPI_COMM_WORLD)   ! ierror left out
#endif
  end subroutine

  ! MPI_Alloc_mem's memory comes from the node-shared heap (zero-copy paths).
  subroutine alloc_mem(p)
    integer, intent(in) :: p
    type(c_ptr) :: cp
    double precision, pointer :: x(:)
    integer :: ierr, i
    call MPI_Alloc_mem(int(8 * 5000, MPI_ADDRESS_KIND), MPI_INFO_NULL, cp, ierr)
    call expect(fheap_size(cp) >= 8 * 5000, 'MPI_Alloc_mem: not a node-shared heap block', 0)
    call c_f_pointer(cp, x, [5000])
    x = [(wrank + i, i = 1, 5000)]
    call MPI_Allreduce(MPI_IN_PLACE, x, 5000, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    do i = 1, 5000
      call expect(abs(x(i) - (p * i + p * (p - 1) / 2)) < 0.5d0, 'allreduce on MPI_Alloc_mem', i)
    end do
    call MPI_Free_mem(x, ierr)
  end subroutine
end module

program fcoll
  use fcases
  implicit none
  character(len=*), parameter :: colls(16) = [character(len=20) :: 'barrier', 'bcast', 'reduce', &
      'allreduce', 'reduce_scatter', 'reduce_scatter_block', 'allgather', 'allgatherv', 'gather', &
      'gatherv', 'scatter', 'scatterv', 'alltoall', 'alltoallv', 'scan', 'exscan']
  HANDLE(MPI_Comm) :: rev
  integer :: ierr, p, k
  integer(c_long_long) :: calls, handled, fallback
  logical :: found
#ifdef F08
  procedure(MPI_User_function) :: affine_fn
#else
  external :: affine_fn
#endif
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, wrank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  call MPI_Type_contiguous(2, MPI_INTEGER, pair_t, ierr)
  call MPI_Type_commit(pair_t, ierr)
  call MPI_Op_create(affine_fn, .false., affine_op, ierr)
  call all_cases(MPI_COMM_WORLD)
  call MPI_Comm_split(MPI_COMM_WORLD, 0, -wrank, rev, ierr)
  call all_cases(rev)
  call MPI_Comm_free(rev, ierr)
  do k = 1, size(colls)
    found = fstats(trim(colls(k)) // c_null_char, calls, handled, fallback) == 1
    call expect(found .and. calls > 0 .and. handled == calls .and. fallback == 0, &
                'not handled by mcoll: ' // trim(colls(k)), int(calls))
  end do
  call errors()
  call alloc_mem(p)
  call MPI_Op_free(affine_op, ierr)
  call MPI_Type_free(pair_t, ierr)
  call report('mcoll-fcoll', 'ALL PASSED (mcoll interposed)')
  call MPI_Finalize(ierr)
end program
