! ftn_ulfm.F90: a Fortran ULFM program, as written for Open MPI 5, built
! once per binding: -DFT_F08 (use mpi_f08 + use mpi_f08_ext), -DFT_USE_MPI
! (use mpi + use mpi_ext), neither (include 'mpif.h' + 'mpif-ext.h');
! -DFT_PCOLLREQ also calls MPIX_Bcast_init (Open MPI 4.1's own extension,
! which ftshim's modules keep). 4 ranks or more, MPI_ERRORS_RETURN on a
! duplicate of MPI_COMM_WORLD; rank 2 is to be killed by FTSHIM_INJECT
! after its 3rd MPI_Allreduce. The survivors revoke, check is_revoked,
! acknowledge (failure_ack, get_acked, get_failed, ack_failed), agree,
! shrink, ishrink, iagree, and sum their ranks on the shrunk communicator.
! Each survivor prints one line:
!   rank R: allreduce class C revoked T acked A failed F agree G sum S size N isize M iagree I
! and CHECK FAILED lines for what is not as expected.
program ftn_ulfm
#if defined(FT_F08)
  use mpi_f08
  use mpi_f08_ext
#elif defined(FT_USE_MPI)
  use mpi
  use mpi_ext
#endif
  implicit none
#if !defined(FT_F08) && !defined(FT_USE_MPI)
  include 'mpif.h'
  include 'mpif-ext.h'
#endif
#if defined(FT_F08)
  type(MPI_Comm) :: comm, shrunk, ishrunk
  type(MPI_Group) :: acked, failed
  type(MPI_Request) :: req
  integer :: revoked
#else
  integer :: comm, shrunk, ishrunk, acked, failed, req
  logical :: revoked
#endif
  integer :: rank, nranks, ierr, rc, i, one, total, cls, nacked, nfailed, flag, iflag
  integer :: sum, ssize, isize, nack

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN, ierr)
#if defined(FT_PCOLLREQ)
  call pcollreq(comm)
#endif
  one = 1
  rc = MPI_SUCCESS
  do i = 1, 1000
    call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, comm, rc)
    if (rc /= MPI_SUCCESS) exit
  end do
  if (rc == MPI_SUCCESS) then
    print '(a,i0,a)', 'CHECK FAILED rank ', rank, ': no allreduce failed'
  end if
  call MPI_Error_class(rc, cls, ierr)
  if (cls /= MPIX_ERR_PROC_FAILED .and. cls /= MPIX_ERR_REVOKED) &
    print '(a,i0,a,i0)', 'CHECK FAILED rank ', rank, ': allreduce class ', cls

  call MPIX_Comm_revoke(comm, ierr)
  call check(ierr, 'revoke')
  call MPIX_Comm_is_revoked(comm, revoked, ierr)
  call check(ierr, 'is_revoked')
  call MPIX_Comm_failure_ack(comm, ierr)
  call check(ierr, 'failure_ack')
  call MPIX_Comm_failure_get_acked(comm, acked, ierr)
  call check(ierr, 'failure_get_acked')
  call MPI_Group_size(acked, nacked, ierr)
  call MPIX_Comm_get_failed(comm, failed, ierr)
  call check(ierr, 'get_failed')
  call MPI_Group_size(failed, nfailed, ierr)
  call MPIX_Comm_ack_failed(comm, nranks, nack, ierr)
  call check(ierr, 'ack_failed')
  flag = 1
  call MPIX_Comm_agree(comm, flag, ierr)
  call check(ierr, 'agree')

  call MPIX_Comm_shrink(comm, shrunk, ierr)
  call check(ierr, 'shrink')
  call MPI_Comm_size(shrunk, ssize, ierr)
  call MPI_Allreduce(rank, sum, 1, MPI_INTEGER, MPI_SUM, shrunk, ierr)
  call check(ierr, 'allreduce on the shrunk communicator')

  call MPIX_Comm_ishrink(comm, ishrunk, req, ierr)
  call check(ierr, 'ishrink')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'wait for ishrink')
  call MPI_Comm_size(ishrunk, isize, ierr)

  iflag = 5
  call MPIX_Comm_iagree(shrunk, iflag, req, ierr)
  call check(ierr, 'iagree')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'wait for iagree')

  print '(a,i0,a,i0,a,l1,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)', 'rank ', rank, ': allreduce class ', cls, &
    ' revoked ', logical_of(revoked), ' acked ', nacked, ' failed ', nfailed, ' agree ', flag, &
    ' sum ', sum, ' size ', ssize, ' isize ', isize, ' iagree ', iflag
  call MPI_Comm_free(ishrunk, ierr)
  call MPI_Comm_free(shrunk, ierr)
  call MPI_Finalize(ierr)

contains

  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    integer :: c, e
    if (code /= MPI_SUCCESS) then
      call MPI_Error_class(code, c, e)
      print '(a,i0,a,a,a,i0)', 'CHECK FAILED rank ', rank, ': ', what, ' returned class ', c
    end if
  end subroutine check

  logical function logical_of(x)
#if defined(FT_F08)
    integer, intent(in) :: x
    logical_of = x /= 0
#else
    logical, intent(in) :: x
    logical_of = x
#endif
  end function logical_of

#if defined(FT_PCOLLREQ)
  ! Open MPI 4.1's persistent broadcast, through ftshim's mpi_ext or
  ! mpi_f08_ext (or mpif-ext.h), before any failure.
  subroutine pcollreq(c)
#if defined(FT_F08)
    type(MPI_Comm), intent(in) :: c
    type(MPI_Request) :: r
#else
    integer, intent(in) :: c
    integer :: r
#endif
    integer :: buf(4), e
    buf = rank
    call MPIX_Bcast_init(buf, 4, MPI_INTEGER, 0, c, MPI_INFO_NULL, r, e)
    call check(e, 'MPIX_Bcast_init')
    call MPI_Start(r, e)
    call MPI_Wait(r, MPI_STATUS_IGNORE, e)
    call check(e, 'wait for the persistent broadcast')
    call MPI_Request_free(r, e)
    if (any(buf /= 0)) print '(a,i0,a)', 'CHECK FAILED rank ', rank, ': MPIX_Bcast_init broadcast nothing'
  end subroutine pcollreq
#endif

end program ftn_ulfm
