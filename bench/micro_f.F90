! micro_f.F90: bench/micro.c's ping-pong from Fortran (use mpi), for the
! failure-free cost of a Fortran program's path into ftshim:
!
!   micro_f pingpong BYTES ITERS   half the round-trip time of ranks 0 and 1, us
!
! It repeats its loop five times after a warm-up and prints the best, in
! micro.c's format.
program micro_f
  use mpi
  implicit none
  integer :: rank, ierr, bytes, iters, round, i
  character(len=32) :: arg
  character, allocatable :: buf(:)
  double precision :: t0, v, best

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(2, arg)
  read (arg, *) bytes
  call get_command_argument(3, arg)
  read (arg, *) iters
  allocate(buf(max(bytes, 1)))
  buf = 'x'
  best = 0
  do round = -1, 4
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, iters
      if (rank == 0) then
        call MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, ierr)
        call MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      else if (rank == 1) then
        call MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, ierr)
      end if
    end do
    v = (MPI_Wtime() - t0) / iters / 2 * 1d6
    if (round == 0 .or. (round > 0 .and. v < best)) best = v
  end do
  if (rank == 0) print '(a,f0.4,a)', 'pingpong ', best, ' us'
  call MPI_Finalize(ierr)
end program micro_f
