! ftn_lose.F90: a Fortran program that loses a rank, built once per MPI
! binding: -DFT_F08 (use mpi_f08), -DFT_USE_MPI (use mpi), neither
! (include 'mpif.h'). MPI_ERRORS_RETURN on MPI_COMM_WORLD; every rank
! makes allreduces (2 ms apart) until one fails (rank 2 is to be killed
! by FTSHIM_INJECT after its 5th MPI_Allreduce), then receives from
! rank 2. Each survivor prints one line:
!   rank R allreduce class C recv class D
! and a rank whose allreduces all succeed prints "rank R no failure".
program ftn_lose
#if defined(FT_F08)
  use mpi_f08
#elif defined(FT_USE_MPI)
  use mpi
#endif
  implicit none
#if !defined(FT_F08) && !defined(FT_USE_MPI)
  include 'mpif.h'
#endif
  integer :: rank, nranks, ierr, rc, i, one, total, x, cls_a, cls_r
#if defined(FT_F08)
  type(MPI_Status) :: status
#else
  integer :: status(MPI_STATUS_SIZE)
#endif

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  one = 1
  rc = MPI_SUCCESS
  do i = 1, 1000
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rc)
    if (rc /= MPI_SUCCESS) exit
    if (total /= nranks) print '(a,i0,a,i0)', 'CHECK FAILED rank ', rank, ' sum ', total
    call nap()
  end do
  if (rc == MPI_SUCCESS) then
    print '(a,i0,a)', 'rank ', rank, ' no failure'
  else
    call MPI_Error_class(rc, cls_a, ierr)
    call MPI_Recv(x, 1, MPI_INTEGER, 2, 7, MPI_COMM_WORLD, status, rc)
    call MPI_Error_class(rc, cls_r, ierr)
    print '(a,i0,a,i0,a,i0)', 'rank ', rank, ' allreduce class ', cls_a, ' recv class ', cls_r
  end if
  call MPI_Finalize(ierr)

contains

  subroutine nap()
    integer :: t0, t, rate
    call system_clock(t0, rate)
    do
      call system_clock(t)
      if (real(t - t0) / real(rate) >= 0.002) exit
    end do
  end subroutine nap

end program ftn_lose
