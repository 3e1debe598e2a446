! Shared by the Fortran test programs: failure reporting, and the C helpers of fstats.c
! (mcoll's counters, heap and neighbor requests, found with dlsym).
module fcheck
#ifdef F08
  use mpi_f08
#else
  use mpi
#endif
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: failures = 0, wrank = 0
  interface
    integer(c_int) function fstats(coll, calls, handled, fallback) bind(C, name="fstats")
      import :: c_int, c_char, c_long_long
      character(kind=c_char), intent(in) :: coll(*)
      integer(c_long_long), intent(out) :: calls, handled, fallback
    end function
    integer(c_long_long) function fheap_size(p) bind(C, name="fheap_size")
      import :: c_long_long, c_ptr
      type(c_ptr), value :: p
    end function
    integer(c_long_long) function fnb_starts(req) bind(C, name="fnb_starts")
      import :: c_long_long, c_int
      integer(c_int), intent(in) :: req   ! the request's Fortran handle (MPI_Fint)
    end function
  end interface
contains
  subroutine expect(ok, what, v)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    integer, intent(in) :: v
    if (.not. ok) then
      failures = failures + 1
      if (failures <= 20) print '(a,i0,3a,i0)', 'FAIL rank=', wrank, ': ', what, ' at ', v
    end if
  end subroutine

  ! The job's verdict (failures summed over MPI_COMM_WORLD), printed by rank 0.
  subroutine report(name, passed)
    character(*), intent(in) :: name, passed
    integer :: total, ierr
    call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (wrank /= 0) return
    if (total == 0) then
      print '(3a)', name, ': ', passed
    else
      print '(2a,i0,a)', name, ': FAILED (', total, ' failures)'
    end if
  end subroutine
end module
