# No buffer is touched after the call that reported its request done: a
# 4 MiB ring exchange on a communicator revoked at once, the buffers
# unmapped as soon as MPI_Wait returns, 20 rounds. Before, a send whose
# transfer the MPI had matched was reported done while the receiver was
# still reading it (MPICH's UCX: process_vm_readv ... Bad address, and
# the job died).
prog=$(build revoke_buffers)
run_job shim 4 -- "$prog"
expect_rc 0
expect_all_checks
expect_err_no_match 'Bad address|process_vm_readv'
expect_no_leftovers revoke_buffers
